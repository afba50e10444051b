"""ws_solver under ``torch.compile`` (issue 37), for one GPU run: a small model compiled with
``mode="max-autotune"`` that calls a user-defined warp-specialized Triton kernel through
``torch.library.triton_op`` / ``wrap_triton`` and lets Inductor choose its GEMM templates.

    PYTHONPATH=. python benchmarks/gpu/torch_compile_check.py OUT [--budget 540] [--size 2048]

Each condition runs in a fresh process (``--child``), with fresh Triton and Inductor caches:

- ``env``: ``WS_SOLVER=optimal WS_SOLVER_REPORT=OUT/env/compile_log.jsonl``, the program
  unchanged; ws_solver is not installed on the GPU machine, so a site folder
  (``ws_solver.autoload.site_folder``) goes first on ``PYTHONPATH``: Inductor's compile
  workers inherit it, as they would inherit an installed ``.pth``;
- ``stock``: no ws_solver;
- ``dropin``: the program calls ``ws_solver.triton.enable("optimal")`` itself (the in-process
  drop-in: Inductor's workers do not see it).

For each: outputs against a float32 PyTorch reference and against eager; the first call's
wall time (compile + autotune) and the compiled model's time (``triton.testing.do_bench``,
median ms); the user kernel alone. After each child, the Triton caches are scanned for
warp-specialized compiles (a ``.ttir`` with ``tt.warp_specialize``) and matched, by Triton's
cache key, with the compile log's reports: every such compile must carry a report, and the
log says which process (the child's own pid, or a worker) compiled it.

Writes ``OUT/summary.json`` and ``OUT/summary.md`` after every condition, so a run cut short
still leaves what it measured; every failure is recorded there (with the tail of the child's
stderr, kept whole in ``OUT/<condition>/stderr.txt``), none stops the run.
"""

# No `from __future__ import annotations`: triton_op reads the ops' annotations as types.

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONDITIONS = ("env", "stock", "dropin")
STRATEGY = "optimal"
TOLERANCE = 2e-2  # max |out - ref| / max |ref|, fp16 inputs, fp32 accumulation
STARTUP_S = 60  # what a child needs besides compiling (import torch, CUDA context)


# -- the child: the program under test --------------------------------------------------------
def child(condition: str, out: Path, size: int) -> None:
    """Runs one condition; writes ``out/result.json`` after every phase."""
    result: dict = {"condition": condition, "pid": os.getpid(), "phases": {}, "errors": []}

    def save() -> None:
        (out / "result.json").write_text(json.dumps(result, indent=1, default=str) + "\n")

    def phase(name: str, fn):
        start = time.perf_counter()
        try:
            value = fn()
            result["phases"][name] = {"ok": True, "wall_s": round(time.perf_counter() - start, 3)}
            return value
        except Exception as e:
            result["phases"][name] = {"ok": False, "wall_s": round(time.perf_counter() - start, 3)}
            result["errors"].append(
                {"phase": name, "error": f"{type(e).__name__}: {e}"[:2000],
                 "traceback": traceback.format_exc()[-4000:]}
            )  # fmt: skip
            return None
        finally:
            save()

    save()
    if condition == "dropin":
        phase("enable in process", lambda: _enable_in_process(out))
    env = phase("import", _import_torch_and_triton)
    if env is None:
        return
    result["versions"] = env
    result["ws_solver_modules_after_import"] = _ws_solver_modules()
    op = phase("define", _define)
    if op is None:
        return
    inputs = phase("inputs", lambda: _inputs(size))
    if inputs is None:
        return
    ref = phase("reference", lambda: _reference(*inputs))
    model = _Model(op)
    compiled = phase("compile", lambda: _compile(model))
    out_compiled = None
    if compiled is not None:
        start = time.perf_counter()
        # clone: max-autotune replays CUDA graphs, and the next run overwrites their outputs
        out_compiled = phase("first call (compile + autotune)", lambda: compiled(*inputs).clone())
        result["first_call_s"] = round(time.perf_counter() - start, 3)
        if out_compiled is not None and ref is not None:
            result["error_vs_reference"] = _relative_error(out_compiled, ref)
        result["compiled_ms"] = phase("time compiled", lambda: _time(lambda: compiled(*inputs)))
    # Eager after compiling: Inductor's workers compile the user kernel first (the parent's
    # eager launch may then find it in Triton's cache).
    eager = phase("eager", lambda: model(*inputs))
    if compiled is not None and out_compiled is not None and eager is not None:
        result["error_vs_eager"] = _relative_error(out_compiled, eager)
    if eager is not None and ref is not None:
        result["eager_error_vs_reference"] = _relative_error(eager, ref)
    x, w1 = inputs[0], inputs[1]
    result["user_kernel_ms"] = phase("time user kernel", lambda: _time(lambda: op(x, w1)))
    _tma_part(result, phase, x, w1)
    result["ws_solver_modules_at_end"] = _ws_solver_modules()
    save()


EXTRA = "tma "  # phases of the TMA part: their errors are noted, not in the verdict


def _tma_part(result: dict, phase, a, b) -> None:
    """The corpus's TMA GEMM (host tensor descriptors; the config ws_solver specializes on
    sm_90, where the pointer GEMM above stays unspecialized under both) as a second custom
    op, compiled alone: descriptors in user kernels are newer in torch.compile than the rest,
    so a failure here is noted without spoiling the main check."""
    op = phase(EXTRA + "define", _define_tma)
    if op is None:
        return

    def gemm(x, y):
        return op(x, y)

    compiled = phase(EXTRA + "compile", lambda: _compile(gemm))

    def run_compiled():
        return compiled(a, b)

    def run_eager():
        return op(a, b)

    out = phase(EXTRA + "first call", run_compiled) if compiled else None
    ref = a.float() @ b.float().T
    if out is not None:
        result["tma_error_vs_reference"] = _relative_error(out, ref)
        result["tma_compiled_ms"] = phase(EXTRA + "time compiled", lambda: _time(run_compiled))
    eager = phase(EXTRA + "eager", run_eager)
    if eager is not None:
        result["tma_eager_error_vs_reference"] = _relative_error(eager, ref)
        result["tma_kernel_ms"] = phase(EXTRA + "time eager", lambda: _time(run_eager))


def _define_tma():
    import torch
    import triton
    from torch.library import triton_op, wrap_triton
    from triton.tools.tensor_descriptor import TensorDescriptor

    from corpus.kernels import gemm_tma

    shape = gemm_tma.CONFIGS["t128x256x64_w8_s3"]
    block = {k: v for k, v in shape.items() if k.isupper()}
    config = triton.Config(block, num_warps=shape["num_warps"], num_stages=shape["num_stages"])
    kernel = triton.autotune(configs=[config], key=[])(gemm_tma.KERNEL)
    bm, bn, bk = block["BLOCK_M"], block["BLOCK_N"], block["BLOCK_K"]

    @triton_op("ws_check::ws_gemm_tma", mutates_args={})
    def ws_gemm_tma(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # a @ b.T
        (m, k), n = a.shape, b.shape[0]
        c = torch.empty((m, n), device=a.device, dtype=a.dtype)
        descriptors = (
            TensorDescriptor.from_tensor(a, [bm, bk]),
            TensorDescriptor.from_tensor(b, [bn, bk]),
            TensorDescriptor.from_tensor(c, [bm, bn]),
        )
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        wrap_triton(kernel)[grid](*descriptors, m, n, k)
        return c

    return ws_gemm_tma


def _enable_in_process(out: Path) -> None:
    import ws_solver.triton as wst

    wst.enable(STRATEGY, report_file=out / "compile_log.jsonl")


def _import_torch_and_triton() -> dict:
    import torch
    import triton

    return {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "capability": list(torch.cuda.get_device_capability(0)),
    }


def _ws_solver_modules() -> int:
    return sum(1 for m in sys.modules if m.split(".")[0] == "ws_solver")


def _define():
    """The user's warp-specialized GEMM (pointer loads, like corpus/kernels/gemm_pointer.py),
    registered as a custom op that torch.compile traces into its graph."""
    import torch
    import triton
    import triton.language as tl
    from torch.library import triton_op, wrap_triton

    # One config, as users write an autotuned kernel for torch.compile (Inductor takes the
    # config's warps and stages; with one config nothing is benchmarked).
    config = triton.Config(
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8), num_warps=8, num_stages=3
    )

    @triton.autotune(configs=[config], key=[])
    @triton.jit
    def ws_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):  # fmt: skip
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        group = pid // (GROUP_M * num_pid_n)
        first_m = group * GROUP_M
        size_m = min(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % size_m)
        pid_n = (pid % (GROUP_M * num_pid_n)) // size_m
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :]
        b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
            k_left = K - k * BLOCK_K
            a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (ks[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(ks[:, None] < k_left) & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K * stride_bk
        c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
        tl.store(c_ptrs, acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))

    @triton_op("ws_check::ws_gemm", mutates_args={})
    def ws_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        (m, k), n = a.shape, b.shape[1]
        c = torch.empty((m, n), device=a.device, dtype=a.dtype)

        def grid(meta):
            return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)

        wrap_triton(ws_gemm_kernel)[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))
        return c

    return ws_gemm


class _Model:
    """relu(x @ w1) through the user's kernel, then two GEMMs Inductor plans itself."""

    def __init__(self, op) -> None:
        self.op = op

    def __call__(self, x, w1, w2, w3, bias):
        import torch

        h = torch.relu(self.op(x, w1))
        h = torch.nn.functional.gelu(h @ w2 + bias)
        return h @ w3


def _inputs(size: int):
    import torch

    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape):
        return (torch.randn(*shape, device="cuda", generator=g) / shape[0] ** 0.5).half()

    return randn(size, size), randn(size, size), randn(size, size), randn(size, size), randn(size)


def _reference(x, w1, w2, w3, bias):
    import torch

    h = torch.relu(x.float() @ w1.float()).half().float()
    h = torch.nn.functional.gelu(h @ w2.float() + bias.float()).half().float()
    return h @ w3.float()


def _compile(model):
    import torch

    return torch.compile(model, mode="max-autotune", fullgraph=True)


def _relative_error(out, ref) -> float:
    out, ref = out.float(), ref.float()
    return float((out - ref).abs().max() / ref.abs().max().clamp_min(1e-6))


def _time(fn) -> float:
    import torch
    from triton.testing import do_bench

    fn()
    torch.cuda.synchronize()
    return round(float(do_bench(fn, warmup=50, rep=300, return_mode="median")), 5)


# -- the parent: conditions, caches, reports --------------------------------------------------
def base32(hex_hash: str) -> str:
    """Triton's cache folder name for a compile's hash (triton.runtime.cache._base32)."""
    return base64.b32encode(bytes.fromhex(hex_hash)).decode().rstrip("=")


def ws_compiles(*roots: Path) -> dict[str, str]:
    """Warp-specialized compiles in Triton caches under ``roots``: {cache folder name: kernel}
    for each ``.ttir`` with a ``tt.warp_specialize`` loop."""
    found = {}
    for root in roots:
        for ttir in root.rglob("*.ttir") if root.is_dir() else ():
            try:
                if "tt.warp_specialize" in ttir.read_text(errors="replace"):
                    found[ttir.parent.name] = ttir.stem
            except OSError:
                continue
    return found


def match_reports(compiled: dict[str, str], log: Path) -> dict:
    """Which warp-specialized compiles carry a report of the compile log, and by which
    processes the log says they were compiled."""
    from ws_solver.triton.dropin import reportlog

    if not log.exists():
        records: list[dict] = []
    else:
        records = reportlog.read(log)
    reports = [r for r in records if r["event"] == "compile"]
    reported = {base32(r["hash"]): r for r in reports if r.get("hash")}
    return {
        "ws_compiles": len(compiled),
        "reports": len(reports),
        "reported": sorted(k for k in compiled if k in reported),
        "missing": sorted(f"{compiled[k]} ({k})" for k in compiled if k not in reported),
        "reports_without_cache_entry": sorted(
            f"{r['kernel']} ({k})" for k, r in reported.items() if k not in compiled
        ),
        "enabled_pids": sorted({r["pid"] for r in records if r["event"] == "enabled"}),
        "off": [r.get("reason") for r in records if r["event"] == "off"],
        "by_pid": _count(r["pid"] for r in reports),
        "strategy_used": _count(r["report"].get("strategy_used") for r in reports),
        "kernels": _count(r["kernel"] for r in reports),
    }


def _count(items) -> dict:
    counts: dict = {}
    for item in items:
        counts[str(item)] = counts.get(str(item), 0) + 1
    return counts


def run_condition(condition: str, out: Path, size: int, timeout_s: float, tmp: Path) -> dict:
    folder = out / condition
    if folder.exists():  # a rerun into the same OUT: no record of an earlier run may count
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    caches = tmp / condition
    env = {k: v for k, v in os.environ.items() if not k.startswith("WS_SOLVER")}
    env["TRITON_CACHE_DIR"] = str(caches / "triton")
    env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
    env["WS_SOLVER_CACHE_DIR"] = str(caches / "plans")  # plans solved fresh, as a first run
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "4")  # a pool of 4 compile workers
    paths = [str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    log = folder / "compile_log.jsonl"
    if condition == "env":
        from ws_solver.autoload import site_folder

        paths.insert(0, site_folder(tmp / "site"))
        env["WS_SOLVER"] = STRATEGY
        env["WS_SOLVER_REPORT"] = str(log)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", condition,
               "--size", str(size), str(folder)]  # fmt: skip
    record: dict = {"condition": condition, "timeout_s": round(timeout_s)}
    start = time.perf_counter()
    with open(folder / "stdout.txt", "w") as stdout, open(folder / "stderr.txt", "w") as stderr:
        try:
            proc = subprocess.run(command, env=env, stdout=stdout, stderr=stderr,
                                  timeout=timeout_s, cwd=ROOT)  # fmt: skip
            record["returncode"] = proc.returncode
        except subprocess.TimeoutExpired:
            record["returncode"] = "timeout"
    record["wall_s"] = round(time.perf_counter() - start, 1)
    record["stderr_tail"] = _tail(folder / "stderr.txt")
    try:
        record["result"] = json.loads((folder / "result.json").read_text())
    except (OSError, ValueError) as e:
        record["result"] = {"errors": [{"phase": "result.json", "error": str(e)}]}
    try:
        record["compiles"] = match_reports(ws_compiles(caches), log)
        record["compiles"].update(by_process(record["compiles"], record["result"].get("pid")))
    except Exception as e:
        record["compiles"] = {"error": f"{type(e).__name__}: {e}"}
    return record


def by_process(compiles: dict, program_pid: int | None) -> dict:
    """Reports written by the program's own process and by other processes (its workers)."""
    counts = compiles.get("by_pid", {})
    parent = counts.get(str(program_pid), 0)
    return {"reports_in_program": parent, "reports_in_workers": sum(counts.values()) - parent}


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def verdict(record: dict) -> list[str]:
    """What this condition fails of the issue's targets (empty: none)."""
    problems = []
    result = record.get("result", {})
    if record.get("returncode") != 0:
        problems.append(f"child exit {record.get('returncode')}")
    problems += [
        f"{e['phase']}: {e['error'][:300]}"
        for e in result.get("errors", [])
        if not e["phase"].startswith(EXTRA)
    ]
    for key in ("tma_error_vs_reference", "tma_eager_error_vs_reference"):
        value = result.get(key)
        if value is not None and value > TOLERANCE:
            problems.append(f"{key} {value:.3g} > {TOLERANCE}")
    for key in ("error_vs_reference", "error_vs_eager"):
        value = result.get(key)
        if value is None:
            problems.append(f"{key}: not measured")
        elif value > TOLERANCE:
            problems.append(f"{key} {value:.3g} > {TOLERANCE}")
    compiles = record.get("compiles", {})
    if "error" in compiles:
        problems.append(f"cache scan: {compiles['error']}")
    elif record["condition"] == "env":
        if not compiles.get("ws_compiles"):
            problems.append("no warp-specialized compile found in the caches")
        if compiles.get("missing"):
            problems.append(f"WS compiles without a report: {', '.join(compiles['missing'])}")
        if compiles.get("off"):
            problems.append(f"processes left ws_solver off: {compiles['off'][:3]}")
        if result.get("ws_solver_modules_after_import") == 0:
            problems.append("ws_solver not loaded in the program after import torch/triton")
    elif record["condition"] == "stock" and compiles.get("reports"):
        problems.append("stock run wrote reports")
    return problems


def markdown(summary: dict) -> str:
    lines = [
        f"# torch.compile check ({summary['started']}, size {summary['size']})",
        "",
        f"`{summary['command']}`",
        "",
        "| condition | exit | wall s | first call s | compiled ms | user kernel ms | "
        "err vs ref | err vs eager | WS compiles | reports (program + workers) | missing | "
        "used |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["conditions"]:
        res, c = r.get("result", {}), r.get("compiles", {})
        lines.append(
            f"| {r['condition']} | {r.get('returncode')} | {r.get('wall_s')} | "
            f"{res.get('first_call_s')} | {res.get('compiled_ms')} | {res.get('user_kernel_ms')} | "
            f"{_fmt(res.get('error_vs_reference'))} | {_fmt(res.get('error_vs_eager'))} | "
            f"{c.get('ws_compiles')} | {c.get('reports')} ({c.get('reports_in_program')} + "
            f"{c.get('reports_in_workers')}) | {len(c.get('missing', []))} | "
            f"{c.get('strategy_used')} |"
        )
    lines.append("")
    for r in summary["conditions"]:
        problems = r.get("problems", [])
        pid = r.get("result", {}).get("pid")
        lines.append(f"## {r['condition']} (program pid {pid})")
        lines.append("")
        if "skipped" in r:
            lines.append(f"- skipped: {r['skipped']}")
        else:
            lines += [f"- {p}" for p in problems] or ["- meets the targets checked here"]
            res = r.get("result", {})
            tma = {k: res[k] for k in sorted(res) if k.startswith("tma_")}
            lines.append(f"- TMA GEMM (corpus gemm_tma, sm_90-specialized config): {tma or '—'}")
            lines += [
                f"- not in the verdict: {e['phase']}: {e['error'][:300]}"
                for e in res.get("errors", [])
                if e["phase"].startswith(EXTRA)
            ]
        if r.get("report_table"):
            lines += ["", "```", r["report_table"].rstrip(), "```"]
        lines.append("")
    lines.append(f"Verdict: {'PASS' if summary['pass'] else 'FAIL'}")
    return "\n".join(lines) + "\n"


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.2e}"


def _report_table(folder: Path) -> str:
    log = folder / "compile_log.jsonl"
    if not log.exists():
        return ""
    try:
        from ws_solver.report.reports import render
        from ws_solver.triton.dropin import reportlog

        return render(str(log), reportlog.summarize(reportlog.read(log)))
    except Exception as e:
        return f"(could not read the compile log: {type(e).__name__}: {e})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for summary.json, summary.md, logs")
    parser.add_argument("--budget", type=float, default=540, help="seconds for all conditions")
    parser.add_argument("--size", type=int, default=2048, help="M = N = K of the GEMMs")
    parser.add_argument("--conditions", nargs="*", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--child", choices=CONDITIONS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.child:
        child(args.child, args.out, args.size)
        return 0
    sys.path.insert(0, str(ROOT))  # this checkout's ws_solver, to read the compile logs
    deadline = time.monotonic() + args.budget
    summary = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "size": args.size,
        "tolerance": TOLERANCE,
        "conditions": [],
        "pass": False,
    }
    with tempfile.TemporaryDirectory(prefix="ws_torch_compile_") as tmp:
        for k, condition in enumerate(args.conditions):
            left = deadline - time.monotonic()
            share = left / (len(args.conditions) - k) if condition != "env" else left * 0.5
            if share < STARTUP_S:
                summary["conditions"].append({"condition": condition, "skipped": "no time left"})
                continue
            try:
                record = run_condition(condition, args.out, args.size, share, Path(tmp))
                record["problems"] = verdict(record)
                record["report_table"] = _report_table(args.out / condition)
            except Exception as e:  # a bug of this script: recorded, the next condition runs
                trace = traceback.format_exc()[-3000:]
                problem = f"check script: {type(e).__name__}: {e}"
                record = {"condition": condition, "problems": [problem], "traceback": trace}
            summary["conditions"].append(record)
            _write(args.out, summary)
    ran = [r for r in summary["conditions"] if "skipped" not in r]
    summary["pass"] = bool(ran) and all(not r["problems"] for r in ran)
    _write(args.out, summary)
    print(markdown(summary), end="")
    return 0 if summary["pass"] else 1


def _write(out: Path, summary: dict) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    (out / "summary.md").write_text(markdown(summary))


if __name__ == "__main__":
    sys.exit(main())
