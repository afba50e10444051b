"""ws_solver: a warp-specialization partitioner for Triton GPU IR (TTGIR) loops.

Its folders are its layers, bottom to top: `core` (strategies, options, clocks), `backends`
(a local pool or Ray), `ir` (TTGIR text and `Module`, printed back byte for byte), `model`
(each loop marked `tt.warp_specialize` as a data-flow graph; targets, plans, the cost model),
`heuristic` and `encode` (the incremental-merge heuristic and the CP-SAT model), `pipeline`
(TTGIR in, partitioned TTGIR out; compare, explore, the plan cache), `triton` (the drop-in:
`ws_solver.triton.enable()`, `ws_solver.triton.autotune`), `research`, `report` and `cli`
(the `ws-solver` command). `ws_solver.explore(...)` lists a loop's best plans;
`ws_solver.compare(...)` puts the heuristic's and the optimal plans side by side;
`ws_solver.corpus_path()` is the folder of the bundled TTGIR corpus to try them on. The
repository's docs/architecture.md names every module.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # `ws_solver.explore(...)`, `ws_solver.compare(...)`, `ws_solver.corpus_path()` without
    # importing the solver on `import ws_solver`.
    if name == "explore":
        from .pipeline.exploration import explore

        return explore
    if name == "compare":
        from .pipeline.comparing import compare

        return compare
    if name == "corpus_path":
        from .core.bundled import corpus_path

        return corpus_path
    raise AttributeError(f"module 'ws_solver' has no attribute {name!r}")
