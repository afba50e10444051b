"""Research code kept beside the package, not part of the drop-in or the CLI's default
paths: Triton's own partition scheduler (the seed) run on a loop, for `compare --seed`."""
