"""Views for people and tools: loop-graph listings, JSON, Graphviz drawings, summary tables."""
