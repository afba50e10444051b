"""The bench's strategies: what each one compiles as, and the verdict on a row of results
(shared by bench_kernels and the reports that read its results.json); its timing rounds."""

from __future__ import annotations

from ws_solver.core.strategy import Strategy

ROUNDS = 3  # interleaved timing passes per config (bench_gpu.bench_kernel); the median is reported
STRATEGIES = ("none", "builtin", "triton", "heuristic", "optimal", "forced")
VERIFY_ONLY = ("triton_racy", "optimal_racy")
# Timed when asked for (--strategies), neither ours nor Triton's in the comparisons.
EXPERIMENTAL = ("triton_overlap", "triton_wgrelease")
# Chosen at launch on the GPU rather than compiled per job (benchmarks/gpu/bench_autotune.py):
# "autotune" is ws_solver.triton.autotune's pick for the config's own launch.
TUNED = ("autotune",)
OURS = frozenset({"none", "heuristic", "optimal", "forced", *TUNED})
# Bench strategy -> (drop-in Strategy, enable() keywords), for the variants compiled through
# the drop-in. "forced" measures what the heuristic's specialized plan does where the cost
# model would not specialize. "triton" is Triton's partitioner with only the Hopper fix
# added; "triton_overlap" adds ws_solver's wgmma wait sinking to it, and "triton_wgrelease"
# also ws_solver's per-warp-group stage release (ws_solver.triton.rewrites.wgrelease), which
# ws_solver's own strategies have by default.
DROPIN_SETTINGS: dict[str, tuple[Strategy, dict]] = {
    "none": (Strategy.NONE, {}),
    "heuristic": (Strategy.HEURISTIC, {}),
    "optimal": (Strategy.OPTIMAL, {}),
    "forced": (Strategy.HEURISTIC, {"force": True}),
    "triton": (Strategy.TRITON, {"overlap_wgmma": False, "release_per_warp_group": False}),
    "triton_overlap": (Strategy.TRITON, {"release_per_warp_group": False}),
    "triton_wgrelease": (Strategy.TRITON, {}),
    "optimal_racy": (Strategy.OPTIMAL, {}),
}
# Compiled with the sm_90 stage-release fix switched off (the drop-in offers no such knob).
UNFIXED = frozenset({"optimal_racy"})
DROPIN = frozenset(DROPIN_SETTINGS)
DESCRIPTION = {
    "none": "ws_solver, no warp specialization",
    "builtin": "stock Triton (plain triton.compile; the version is in the header)",
    "triton": "Triton's partitioner, generic route + ws_solver Hopper fix",
    "heuristic": "ws_solver heuristic plan + Hopper fix + per-warp-group release",
    "forced": "ws_solver heuristic plan, specialized even where the model says it does not pay",
    "optimal": "ws_solver CP-SAT plan + Hopper fix + per-warp-group release",
    "triton_racy": "Triton's partitioner, generic route, no fix (expected to fail)",
    "triton_overlap": "Triton's partitioner + Hopper fix + ws_solver's wgmma wait sinking",
    "triton_wgrelease": "triton_overlap + stages released per warp group (PTX rewrite)",
    "optimal_racy": "ws_solver CP-SAT plan without the Hopper fix (fault injection)",
    "autotune": "ws_solver.triton.autotune's choice for the config's launch, tuned on this GPU "
    "(the compile record names the winning candidate)",
}


def split_strategies(names: str) -> tuple[list[str], list[str]]:
    """(the strategies compiled per job, those tuned at launch: TUNED) of a comma-separated
    --strategies list, each once, in the order given."""
    listed = list(dict.fromkeys(s.strip() for s in names.split(",") if s.strip()))
    return [s for s in listed if s not in TUNED], [s for s in listed if s in TUNED]


def status_of(row: dict) -> str:
    comp = row.get("compile") or {}
    if comp.get("error"):
        return "COMPILE-ERROR"
    dropin = comp.get("dropin") or {}
    used = dropin.get("strategy_used")
    asked = DROPIN_SETTINGS.get(row["strategy"], (row["strategy"],))[0]
    # Another strategy's kernel with no failed attempt is the decision check's choice
    # (`dropin.decision` says why): the strategy working as built, not a fallback.
    if row["strategy"] in DROPIN and used and used != asked and dropin.get("fallbacks"):
        return f"FALLBACK->{used}"
    ver = row.get("verify")
    if ver is None:
        return "compiled" if row.get("dry_run") else "not-run"
    if not ver.get("passed"):
        return "FAILED"
    if (row.get("bench") or {}).get("failed") or (row.get("bench") or {}).get("error"):
        return "FAILED@size"
    return "ok"


def is_our_failure(row: dict) -> bool:
    return row["strategy"] in OURS and status_of(row) not in ("ok", "compiled")
