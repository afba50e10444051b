"""The rewrites the drop-in runs on Triton's output (TTGIR after the pipeline, and PTX),
behind one protocol (`chain`)."""
