"""The bottom layer every other one shares: strategies, solver options, deadlines, the
environment variables' names, cache files and helper processes."""
