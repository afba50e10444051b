"""The config-space corpus: launch configurations users and autotuners actually try, generated.

For each kernel family (a module of ``corpus/kernels``) a grid of tiles, warps, stages and the
kernel's own switches (activation, flattened loops, causal, head dim, S one block ahead),
dropped where the tile cannot fit shared memory. Causal attention tiles the kernel computes
wrongly (BLOCK_M < BLOCK_N, `causal_blocks_supported`) are not generated. Names follow the
hand-picked ``CONFIGS`` (``t128x256x64_w4_s3``); a generated config with a reference name is
that reference config. Every family comes in the three forms users write (``FORMS``):
descriptors passed from the host, made inside the kernel (``*_indesc``) and pointer loads
(``*_pointer``), each form on the same grid, filter and CI tiles.
The 24 hand-picked configs stay the reference set; this space is for calibration and sweeps.

    python -m corpus.configspace list [--slice ci] [--family F]
    python -m corpus.configspace dump [--slice ci] [--family F] [--target sm90|sm100] --out DIR
    python -m corpus.configspace index [--out FILE]    # the space as JSON (committed)
    python -m corpus.configspace check [--family F]    # every config (of F) to the
                                  # partitioner input point; per family, into the index
    python -m corpus.configspace extra --out FILE      # {kernel: {name: config}} for
                                  # benchmarks.common.bench_compile.add_extra_configs

``dump`` writes TTGIR at the partitioner input point with corpus/dump.py's machinery (the same
source, hook and relativized locs) and an ``index.json`` of what it dumped (with stock Triton's
decision for each, corpus/stock.py) and what failed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Each family in the three forms users write: descriptors from the host (the plain name),
# descriptors made inside the kernel (`_indesc`, `tl.make_tensor_descriptor`) and pointer loads
# (`_pointer`; gemm_tma's is gemm_pointer). Same grid, computation and inputs per form.
FAMILIES: tuple[str, ...] = (
    "gemm_tma",
    "gemm_tma_indesc",
    "gemm_pointer",
    "gemm_fp8",
    "gemm_fp8_indesc",
    "gemm_fp8_pointer",
    "gemm_persistent",
    "gemm_persistent_indesc",
    "gemm_persistent_pointer",
    "attention_fwd",
    "attention_fwd_indesc",
    "attention_fwd_pointer",
)
# The form of each family: "host" (descriptors passed in), "kernel" (made inside the kernel),
# "pointer" (pointer loads, no descriptor).
FORMS: dict[str, str] = {
    f: "kernel" if f.endswith("_indesc") else "pointer" if f.endswith("_pointer") else "host"
    for f in FAMILIES
}
TARGETS: dict[str, int] = {"sm90": 90, "sm100": 100}
# 228 KB of shared memory per SM on sm_90 and sm_100; a CTA may take 227 KB of it (1 KB is
# reserved per block by the driver).
SMEM_PER_SM = 228 * 1024
SMEM_RESERVED = 1024
SMEM_LIMIT = SMEM_PER_SM - SMEM_RESERVED
BARRIER_BYTES = 8  # one mbarrier per stage (and per handoff); a rounding error next to tiles
INDEX_FILE = Path(__file__).resolve().parent / "configspace" / "index.json"

# Grids. GEMM: the tiles Triton's own tests and the usual autotune lists sweep.
GEMM_BLOCK_M = (64, 128)
GEMM_BLOCK_N = (128, 256)
GEMM_BLOCK_K = (64, 128)
WARPS = (4, 8)
STAGES = (2, 3, 4)
GROUP_M = 8
ACTIVATIONS = ("relu", "gelu")
FLATTEN = (False, True)
HEAD_DIMS = (64, 128)
ATTN_BLOCK_M = (64, 128)
ATTN_BLOCK_N = (64, 128)

# Bytes per element of the operands the family's loop loads and of the tile its epilogue
# stores, and whether the epilogue's staging buffer is live with the pipeline's (persistent:
# the epilogue is inside the loop that the stages serve; one-tile kernels store after the
# loop, where Triton's allocator reuses the stages' memory).
_GEMM_BYTES = {
    "gemm_tma": (2, 2),
    "gemm_tma_indesc": (2, 2),
    "gemm_pointer": (2, 2),
    "gemm_fp8": (1, 2),
    "gemm_fp8_indesc": (1, 2),
    "gemm_fp8_pointer": (1, 2),
    "gemm_persistent": (2, 2),
    "gemm_persistent_indesc": (2, 2),
    "gemm_persistent_pointer": (2, 2),
}
PERSISTENT = frozenset({"gemm_persistent", "gemm_persistent_indesc", "gemm_persistent_pointer"})
ATTENTION = frozenset({"attention_fwd", "attention_fwd_indesc", "attention_fwd_pointer"})

# The CI slice: every family, both warps counts, the 4-warp 128x256 tiles behind issue 34's
# worst losses, 8-warp 2-stage GEMMs, causal and not, both head dims. Fixed by name; a family's
# three forms take the same tiles, so that the forms compare config by config.
_CI_GEMM = ("t128x256x64_w4_s3", "t128x128x64_w8_s2", "t64x128x64_w4_s4")
_CI_FP8 = ("t128x256x128_w4_s3", "t128x128x128_w8_s2", "t128x256x64_w8_s2")
_CI_PERSISTENT = (
    "t128x256x64_relu_w4_s3",
    "t128x128x64_gelu_w8_s2",
    "t128x128x128_gelu_flat_w4_s3",
    "t128x256x64_gelu_w8_s2",
)
_CI_ATTENTION = (
    "d128_m128n128_w4_s2",
    "causal_d64_m128n64_w8_s3",
    "d128_m128n128_w8_s3_ahead",
    "causal_d128_m64n64_w4_s4",
)
CI_SLICE: dict[str, tuple[str, ...]] = {
    "gemm_tma": _CI_GEMM,
    "gemm_tma_indesc": _CI_GEMM,
    "gemm_pointer": _CI_GEMM,
    "gemm_fp8": _CI_FP8,
    "gemm_fp8_indesc": _CI_FP8,
    "gemm_fp8_pointer": _CI_FP8,
    "gemm_persistent": _CI_PERSISTENT,
    "gemm_persistent_indesc": _CI_PERSISTENT,
    "gemm_persistent_pointer": _CI_PERSISTENT,
    "attention_fwd": _CI_ATTENTION,
    "attention_fwd_indesc": _CI_ATTENTION,
    "attention_fwd_pointer": _CI_ATTENTION,
}


@dataclass(frozen=True)
class Entry:
    """One configuration of the space."""

    family: str
    name: str
    config: dict
    smem_estimate: int

    @property
    def key(self) -> str:
        return f"{self.family}.{self.name}"


# -- shared memory ---------------------------------------------------------------------------
def gemm_smem(family: str, c: dict) -> int:
    """Estimated shared bytes of a GEMM config: stages × (BM×BK + BN×BK) × operand bytes, and
    the epilogue's BM×BN staging tile (added where it is live with the stages, else the max)."""
    op_bytes, out_bytes = _GEMM_BYTES[family]
    bm, bn, bk, s = c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["num_stages"]
    stages = s * (bm * bk + bn * bk) * op_bytes + s * BARRIER_BYTES
    epilogue = bm * bn * out_bytes
    return stages + epilogue if family in PERSISTENT else max(stages, epilogue)


def attention_smem(c: dict) -> int:
    """Q (held through the loop) + stages × (K + V blocks), fp16; O's staging tile after."""
    d, bm, bn, s = c["HEAD_DIM"], c["BLOCK_M"], c["BLOCK_N"], c["num_stages"]
    loop = bm * d * 2 + s * 2 * bn * d * 2 + 2 * s * BARRIER_BYTES
    return max(loop, bm * d * 2)


def smem_estimate(family: str, config: dict) -> int:
    return attention_smem(config) if family in ATTENTION else gemm_smem(family, config)


def fits(family: str, config: dict) -> bool:
    return smem_estimate(family, config) <= SMEM_LIMIT


# -- the grids ---------------------------------------------------------------------------------
def _gemm(family: str) -> Iterator[tuple[str, dict]]:
    grid = itertools.product(GEMM_BLOCK_M, GEMM_BLOCK_N, GEMM_BLOCK_K, WARPS, STAGES)
    for bm, bn, bk, w, s in grid:
        tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=GROUP_M)
        yield f"t{bm}x{bn}x{bk}_w{w}_s{s}", tile | dict(num_warps=w, num_stages=s)


def _persistent() -> Iterator[tuple[str, dict]]:
    grid = itertools.product(
        GEMM_BLOCK_M, GEMM_BLOCK_N, GEMM_BLOCK_K, ACTIVATIONS, FLATTEN, WARPS, STAGES
    )
    for bm, bn, bk, act, flat, w, s in grid:
        config = dict(
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            GROUP_M=GROUP_M,
            ACTIVATION=act,
            FLATTEN=flat,
            num_warps=w,
            num_stages=s,
        )
        yield f"t{bm}x{bn}x{bk}_{act}{'_flat' if flat else ''}_w{w}_s{s}", config


def causal_blocks_supported(causal: bool, block_m: int, block_n: int) -> bool:
    """Whether attention_fwd computes the right result with these tiles. The causal kernel
    runs its unmasked off-band loop over keys [0, off_m) in BLOCK_N steps and its masked
    on-band loop from off_m, where off_m is a multiple of BLOCK_M: unless BLOCK_M is a
    multiple of BLOCK_N, the last off-band block runs past off_m unmasked and the on-band
    loop counts those keys again (wrong under stock Triton too,
    benchmarks/results/2026-12-04-configspace-h200). Here: BLOCK_M < BLOCK_N."""
    return not causal or block_m % block_n == 0


def _attention() -> Iterator[tuple[str, dict]]:
    grid = itertools.product(
        (False, True), HEAD_DIMS, ATTN_BLOCK_M, ATTN_BLOCK_N, WARPS, STAGES, (False, True)
    )
    for causal, d, bm, bn, w, s, ahead in grid:
        # S one block ahead is FlashAttention-3's 128-row schedule; not with 64-row tiles.
        if ahead and bm != 128:
            continue
        if not causal_blocks_supported(causal, bm, bn):
            continue
        config = dict(
            HEAD_DIM=d,
            BLOCK_M=bm,
            BLOCK_N=bn,
            CAUSAL=causal,
            AHEAD=ahead,
            num_warps=w,
            num_stages=s,
        )
        name = f"{'causal_' if causal else ''}d{d}_m{bm}n{bn}_w{w}_s{s}{'_ahead' if ahead else ''}"
        yield name, config


def _grid(family: str) -> Iterator[tuple[str, dict]]:
    if family in PERSISTENT:
        return _persistent()
    if family in ATTENTION:
        return _attention()
    if family in _GEMM_BYTES:
        return _gemm(family)
    raise ValueError(f"no config space for {family!r}; families: {', '.join(FAMILIES)}")


def unfiltered(family: str) -> dict[str, dict]:
    """The family's whole grid, before the shared-memory filter."""
    out: dict[str, dict] = {}
    for name, config in _grid(family):
        assert name not in out, f"{family}.{name} generated twice"
        out[name] = config
    return out


def space(family: str | None = None) -> list[Entry]:
    """The space (one family, or all), deterministic order: families as FAMILIES, then by name,
    shared-memory misfits dropped."""
    out = []
    for fam in FAMILIES if family is None else (family,):
        for name, config in sorted(unfiltered(fam).items()):
            if fits(fam, config):
                out.append(Entry(fam, name, config, smem_estimate(fam, config)))
    return out


def ci_slice(family: str | None = None) -> list[Entry]:
    """The fixed CI slice (a subset of `space`)."""
    by_key = {e.key: e for e in space(family)}
    keys = [f"{f}.{n}" for f, names in CI_SLICE.items() for n in names]
    return [by_key[k] for k in keys if family is None or k.startswith(f"{family}.")]


def select(slice_name: str | None, family: str | None) -> list[Entry]:
    if slice_name in (None, "all"):
        return space(family)
    if slice_name == "ci":
        return ci_slice(family)
    raise ValueError(f"unknown slice {slice_name!r} (ci, all)")


def interleaved(entries: list[Entry]) -> list[Entry]:
    """Round-robin over families, so that any prefix of a partial sweep covers all of them."""
    by_family: dict[str, list[Entry]] = {}
    for e in entries:
        by_family.setdefault(e.family, []).append(e)
    out = []
    for row in itertools.zip_longest(*by_family.values()):
        out.extend(e for e in row if e is not None)
    return out


def sample_order(entries: list[Entry]) -> list[Entry]:
    """A fixed pseudo-random order (by a hash of each key), families interleaved: any prefix
    of a partial sweep is a spread sample of the space rather than its first tiles by name."""
    import hashlib

    return interleaved(sorted(entries, key=lambda e: hashlib.sha256(e.key.encode()).hexdigest()))


def extra_configs(entries: list[Entry]) -> dict[str, dict[str, dict]]:
    """{kernel: {name: config}}: the JSON that
    `benchmarks.common.bench_compile.add_extra_configs` reads."""
    out: dict[str, dict[str, dict]] = {}
    for e in entries:
        out.setdefault(e.family, {})[e.name] = e.config
    return out


def register(entries: list[Entry]) -> None:
    """Merge the entries into their corpus modules' CONFIGS (this process only), so corpus/dump
    and bench_compile find them by name. A reference name must mean the same config."""
    from corpus import kernels as corpus_kernels

    for e in entries:
        configs = corpus_kernels.load(e.family).CONFIGS
        if configs.setdefault(e.name, e.config) != e.config:
            raise ValueError(f"{e.key}: differs from the hand-picked config of that name")


def index(compile_check: dict | None = None) -> dict:
    """The space as committed JSON: limits, counts, every config, and the last `check` per
    Triton version, target and family (configs that did not reach the partitioner input
    point; kept from the committed index when not given). A family never checked under a
    version has no row there."""
    entries = space()
    if compile_check is None:
        old = json.loads(INDEX_FILE.read_text()) if INDEX_FILE.exists() else {}
        old_keys: dict[str, set[str]] = {}
        for c in old.get("configs", []):
            old_keys.setdefault(c["family"], set()).add(f"{c['family']}.{c['name']}")
        compile_check = prune_check(
            old.get("compile_check", {}), old_keys, {e.key for e in entries}
        )
    counts = {f: {"generated": len(unfiltered(f)), "fit": 0} for f in FAMILIES}
    for e in entries:
        counts[e.family]["fit"] += 1
    return {
        "smem_limit_bytes": SMEM_LIMIT,
        "counts": counts,
        "total": len(entries),
        "ci_slice": [e.key for e in ci_slice()],
        "compile_check": compile_check,
        "configs": [asdict(e) for e in entries],
    }


def prune_check(compile_check: dict, checked: dict[str, set[str]], keys: set[str]) -> dict:
    """A committed `check` ({version: {target: {family: row}}}) restricted to the configs of
    the space now (`keys`). `check` compiles the whole family it is given (`checked[family]`,
    the family's configs when it ran), so a config it checked that is not among its failures
    compiled: each dropped one leaves the "ok" count. A row that did not cover its family
    exactly cannot be restricted so; it is left out (run `check` again), as is a family no
    longer in FAMILIES."""
    out: dict = {}
    for version, targets in compile_check.items():
        out[version] = {}
        for target, families in targets.items():
            kept = {}
            for family, row in families.items():
                done = checked.get(family, set())
                if family not in FAMILIES or row["ok"] + len(row["failed"]) != len(done):
                    continue
                dropped = done - keys - set(row["failed"])
                kept[family] = {
                    "ok": row["ok"] - len(dropped),
                    "failed": {k: v for k, v in row["failed"].items() if k in keys},
                }
            out[version][target] = kept
    return out


def check(entries: list[Entry], targets: list[str]) -> dict:
    """Compile each entry × target to the partitioner input point under the installed Triton;
    {version: {target: {family: {"ok": n, "failed": {key: first error line}}}}}, merged into
    the committed index's check (the rows of the families checked replaced). `entries` must be
    whole families (`space(family)`): a row stands for its family."""
    import tempfile

    import triton

    from corpus import dump as corpus_dump

    register(entries)
    old = json.loads(INDEX_FILE.read_text()).get("compile_check", {}) if INDEX_FILE.exists() else {}
    result = old.setdefault(triton.__version__, {})
    with tempfile.TemporaryDirectory(prefix="ws_configspace_check_") as out:
        for target in targets:
            rows = result.setdefault(target, {})
            for family in dict.fromkeys(e.family for e in entries):
                rows[family] = {"ok": 0, "failed": {}}
            for e in entries:
                row = rows[e.family]
                try:
                    corpus_dump.dump_job(corpus_dump.Job(e.family, e.name, target), Path(out))
                    row["ok"] += 1
                except Exception as exc:
                    row["failed"][e.key] = corpus_dump._first_line(exc)
                    print(f"FAIL {e.key} {target}: {row['failed'][e.key]}", flush=True)
            for family in dict.fromkeys(e.family for e in entries):
                row = rows[family]
                print(
                    f"{triton.__version__} {target} {family}: {row['ok']} ok,"
                    f" {len(row['failed'])} failed"
                )
    return old


# -- dumping -----------------------------------------------------------------------------------
def dump(entries: list[Entry], targets: list[str], out: Path) -> int:
    """TTGIR at the partitioner input point for each entry × target; returns the failures.
    ``out/index.json`` lists the dumps (corpus/dump.py's entries) and the failures."""
    from corpus import dump as corpus_dump

    register(entries)
    out.mkdir(parents=True, exist_ok=True)
    index_path = out / "index.json"
    old = json.loads(index_path.read_text()) if index_path.exists() else {}
    dumped = {d["file"]: d for d in old.get("dumps", [])}
    failed = {f["file"]: f for f in old.get("failed", [])}
    failures = 0
    for e in entries:
        for target in targets:
            job = corpus_dump.Job(e.family, e.name, target)
            try:
                entry = corpus_dump.dump_job(job, out, stock=True)
            except Exception as exc:  # one config that does not compile must not stop the rest
                failed[job.file] = {"file": job.file, "error": corpus_dump._first_line(exc)}
                dumped.pop(job.file, None)
                failures += 1
                print(f"FAIL {job.file}: {failed[job.file]['error']}", flush=True)
                continue
            failed.pop(job.file, None)
            dumped[job.file] = asdict(entry)
            print(f"ok   {job.file} ({entry.ws_loops} ws loop(s))", flush=True)
    import triton

    data = {
        "triton": triton.__version__,
        "dumps": [dumped[f] for f in sorted(dumped)],
        "failed": [failed[f] for f in sorted(failed)],
    }
    corpus_dump.write_atomic(index_path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return failures


def slice_dir(version: str) -> Path:
    """Where the CI slice's dumps for Triton `version` are committed."""
    major_minor = ".".join(version.split(".")[:2])
    return Path(__file__).resolve().parent / "configspace" / f"ttgir-{major_minor}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("list", "dump", "check", "index", "extra"))
    parser.add_argument("--slice", default=None, help="ci, or all (default)")
    parser.add_argument("--family", default=None, choices=FAMILIES)
    parser.add_argument("--target", default=None, choices=sorted(TARGETS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    entries = select(args.slice, args.family)
    if args.command == "list":
        for e in entries:
            print(f"{e.key}\t{e.smem_estimate}")
        print(f"{len(entries)} configurations", file=sys.stderr)
        return 0
    if args.command in ("index", "check"):
        targets = [args.target] if args.target else list(TARGETS)
        if args.command == "check" and args.slice not in (None, "all"):
            parser.error("check runs whole families (--family), not a slice")
        checked = check(space(args.family), targets) if args.command == "check" else None
        out = args.out or INDEX_FILE
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(index(checked), indent=1, sort_keys=True) + "\n")
        print(f"{out}: {len(space())} configurations")
        return 0
    if args.command == "extra":
        if args.out is None:
            parser.error("extra needs --out")
        args.out.write_text(json.dumps(extra_configs(entries), indent=1, sort_keys=True) + "\n")
        return 0
    if args.out is None:
        parser.error("dump needs --out")
    targets = [args.target] if args.target else list(TARGETS)
    return 1 if dump(entries, targets, args.out) else 0


if __name__ == "__main__":
    sys.exit(main())
