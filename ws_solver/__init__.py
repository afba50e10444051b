"""ws_solver: a warp-specialization partitioner for Triton GPU IR (TTGIR) loops.

`ws_solver.ir` reads TTGIR; `ws_solver.model` turns each loop marked `tt.warp_specialize`
into a data-flow graph and knows the hardware targets; the `ws-solver` command
(`ws_solver.cli`) shows those graphs.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # `ws_solver.explore(...)` without importing the solver on `import ws_solver`.
    if name == "explore":
        from .exploration import explore

        return explore
    raise AttributeError(f"module 'ws_solver' has no attribute {name!r}")
