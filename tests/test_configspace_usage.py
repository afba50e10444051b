"""benchmarks/cpu/configspace_usage.py's records and summary, on small made-up records (no
compile)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchmarks.cpu import configspace_records as cr
from benchmarks.cpu import configspace_usage as cu
from corpus import configspace as cs

V = "3.6.0"


def _compile(config: str, strategy: str, regs: int, stack: int = 0, ws: int = 0, **kw) -> dict:
    rec = {"kind": "compile", "config": config, "target": "sm90", "triton": V}
    rec |= {"strategy": strategy, "ok": True, "warp_specialize_ops": ws}
    rec["ptxas"] = {
        "registers": regs,
        "stack_bytes": stack,
        "spill_store_bytes": stack,
        "spill_load_bytes": stack,
        "wgmma_serialized": bool(stack),
    }
    return rec | kw


def _model(config: str, predicted: int) -> dict:
    return {"kind": "model", "config": config, "target": "sm90", "triton": V} | {
        "predicted_registers": [predicted],
        "predicted_max": predicted,
    }


def _failed(config: str, strategy: str) -> dict:
    return {"kind": "compile", "config": config, "target": "sm90", "triton": V} | {
        "strategy": strategy,
        "ok": False,
        "error": "RuntimeError: PassManager::run failed",
    }


RECORDS = [
    # a: ours spills, stock specializes without spilling -> the key table
    _model("gemm_tma.a", 384),
    _compile("gemm_tma.a", "builtin", 168, ws=1),
    _compile("gemm_tma.a", "none", 255, stack=624),
    _compile("gemm_tma.a", "optimal", 255, stack=624),
    # b: nobody spills; the model predicts 200, ptxas uses 184
    _model("gemm_tma.b", 200),
    _compile("gemm_tma.b", "builtin", 184),
    _compile("gemm_tma.b", "none", 184),
    _compile("gemm_tma.b", "optimal", 184),
    # c: the model predicts a spill that ptxas avoids (a false positive); stock does not compile
    _model("gemm_fp8.c", 264),
    _failed("gemm_fp8.c", "builtin"),
    _compile("gemm_fp8.c", "none", 240),
    _compile("gemm_fp8.c", "optimal", 240),
    # d: predicted 120, ptxas 128; optimal spills where stock did not compile
    _model("gemm_fp8.d", 120),
    _failed("gemm_fp8.d", "builtin"),
    _compile("gemm_fp8.d", "none", 128),
    _compile("gemm_fp8.d", "optimal", 255, stack=64, ws=1),
]


def test_spills() -> None:
    assert cr.spills(_compile("x", "none", 255, stack=8)) is True
    assert cr.spills(_compile("x", "none", 200)) is False
    assert cr.spills(_failed("x", "none")) is None


def test_spill_regressions() -> None:
    rows = cr.spill_regressions(RECORDS)
    assert [(c, t, v) for c, t, v, _, _ in rows] == [("gemm_tma.a", "sm90", V)]
    assert cr.spills_without_stock(RECORDS) == [("gemm_fp8.d", "sm90", V)]


def test_model_agreement() -> None:
    a = cr.model_agreement(RECORDS)
    # d's `none` kernel is unspecialized; all four have a model record and a `none` ptxas
    assert a["n"] == 4
    assert (a["tp"], a["tn"], a["fp"], a["fn"]) == (1, 2, 1, 0)
    assert a["agreement"] == 0.75
    # |200-184|, |264-240|, |120-128| where ptxas < 255
    assert a["n_register_error"] == 3
    assert a["register_error_median"] == 16
    assert a["register_error_p90"] == 24
    assert a["disagreements"] == [("gemm_fp8.c", "sm90", V, 264, 240, False)]


def test_model_agreement_skips_specialized_and_missing() -> None:
    recs = [_model("x.a", 300), _compile("x.a", "none", 255, stack=8, ws=1), _model("x.b", 100)]
    assert cr.model_agreement(recs)["n"] == 0


def test_latest_record_wins() -> None:
    recs = [_failed("gemm_tma.a", "optimal"), _compile("gemm_tma.a", "optimal", 200)]
    counts = cr.strategy_counts(recs)
    assert counts[(V, "sm90", "optimal")] | {} == {
        "n": 1,
        "errors": 0,
        "ws": 0,
        "spill": 0,
        "serialized": 0,
        "no_ptxas": 0,
    }


def test_strategy_counts_and_summary() -> None:
    counts = cr.strategy_counts(RECORDS)
    assert counts[(V, "sm90", "builtin")]["errors"] == 2
    assert counts[(V, "sm90", "optimal")]["spill"] == 2
    assert counts[(V, "sm90", "optimal")]["serialized"] == 2
    assert counts[(V, "sm90", "optimal")]["ws"] == 1
    text = cr.summary(RECORDS)
    assert "Triton 3.6.0 sm90: 4" in text
    assert "| 3.6.0 | sm90 | optimal | 4 | 0 | 1 | 2 | 2 |" in text
    assert "- 3.6.0 sm90 builtin: 2 × RuntimeError: PassManager::run failed" in text
    assert "does not: 1" in text and "| gemm_tma.a | sm90 | 3.6.0 |" in text
    assert "| 3.6.0 | sm90 | 4 | 3/4 (0.75) | 1 | 2 | 1 | 0 | 3 | 16 | 24 |" in text
    # strategies in their fixed order
    rows = [
        ln.split("|")[3].strip() for ln in text.splitlines() if ln.startswith("| 3.6.0 | sm90 | ")
    ]
    assert rows[:3] == ["builtin", "none", "optimal"]


def test_read_records_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps(RECORDS[1])[:20])
    assert cr.read_records([path, tmp_path / "missing.jsonl"]) == [RECORDS[0]]


def test_plan_tasks_resumes() -> None:
    entries = cs.sample_order(cs.ci_slice("gemm_tma"))[:2]
    first = entries[0].key
    have = {("model", first, "sm90", V, None)} | {
        ("compile", first, "sm90", V, s) for s in ("builtin", "none")
    }
    tasks = cu.plan_tasks(entries, ["sm90", "sm100"], ["builtin", "none"], V, have)
    assert [(t.key, t.target, t.strategies, m) for t, m in tasks] == [
        (entries[1].key, "sm90", ("builtin", "none"), True),
        (first, "sm100", ("builtin", "none"), True),
        (entries[1].key, "sm100", ("builtin", "none"), True),
    ]
    have |= {("compile", entries[1].key, "sm90", V, "builtin")}
    tasks = cu.plan_tasks(entries, ["sm90"], ["builtin", "none"], V, have)
    assert [(t.strategies, m) for t, m in tasks] == [(("none",), True)]


def test_run_task_reports_what_a_dead_child_did_not_write(monkeypatch) -> None:
    def dead(cmd, **kw):
        out = Path(cmd[cmd.index("--out") + 1])
        out.write_text(json.dumps(_model("gemm_tma.a", 384) | {"target": "sm100"}) + "\n")
        return subprocess.CompletedProcess(cmd, -11, "", "Segmentation fault\n")

    monkeypatch.setattr(cu.subprocess, "run", dead)
    task = cu.Task("gemm_tma.a", "sm100", ("builtin", "optimal"))
    recs = cu.run_task(task, V, True, 10)
    assert [(r["kind"], r.get("strategy")) for r in recs] == [
        ("model", None),
        ("compile", "builtin"),
        ("compile", "optimal"),
    ]
    assert recs[1]["ok"] is False and recs[1]["error"].startswith("child died (rc -11)")
    assert recs[2]["target"] == "sm100" and recs[2]["triton"] == V


def test_summary_cli(tmp_path: Path, capsys) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert cu.main(["--summary", str(path)]) == 0
    assert "Model vs ptxas" in capsys.readouterr().out


def test_mlir_error() -> None:
    text = (
        "module {\n}\n"
        "/x/gemm_tma.py:42:33: error: 'tt.descriptor_store' op tensor descriptor block and "
        "tensor types must match\n"
        "/x/gemm_tma.py:18:0: error: Failures have been detected while processing an MLIR pass\n"
    )
    assert cu.mlir_error(text) == (
        "'tt.descriptor_store' op tensor descriptor block and tensor types must match"
    )
    assert cu.mlir_error("no diagnostics\n") is None
    only_pass = (
        "/x/a.py:95:1: error: Failures have been detected while processing an MLIR pass\n"
        "/x/a.py:95:1: note: Pipeline failed while executing [`NVGPUWarpSpecialization` on "
        "'builtin.module' operation]: reproducer generated\n"
    )
    assert cu.mlir_error(only_pass) == "NVGPUWarpSpecialization failed (no diagnostic)"


def test_stderr_captured() -> None:
    import os

    with cu._stderr_captured() as printed:
        os.write(2, b"k.py:1:2: error: boom\n")
    assert cu.mlir_error(printed()) == "boom"


def test_shared_memory_check() -> None:
    key = "gemm_tma.t128x256x64_w4_s3"
    est = {e.key: e.smem_estimate for e in cs.space()}[key]
    recs = [
        _compile(key, "none", 255, shared_bytes=est),
        _compile(key, "builtin", 168, shared_bytes=cs.SMEM_LIMIT + 1),
        _compile("gemm_tma.unknown", "none", 100, shared_bytes=1000),
    ]
    check = cr.shared_memory_check(recs)
    assert check[(V, "sm90", "none")] == {
        "n": 1,
        "over_limit": 0,
        "ratio_median": 1.0,
        "ratio_min": 1.0,
    }
    assert check[(V, "sm90", "builtin")]["over_limit"] == 1
    assert list(check) == [(V, "sm90", "builtin"), (V, "sm90", "none")]


def test_every_kth_samples_each_family_in_index_order() -> None:
    entries = cs.space("gemm_tma") + cs.space("gemm_pointer")
    picked = cu.every_kth(entries, 5)
    for family in ("gemm_tma", "gemm_pointer"):
        assert [e.key for e in picked if e.family == family] == [
            e.key for e in cs.space(family)[::5]
        ]
    assert cu.every_kth(entries, 1) == entries
    with pytest.raises(ValueError):
        cu.every_kth(entries, 0)


def test_every_option_reaches_the_sweep(tmp_path: Path, monkeypatch) -> None:
    seen = []
    monkeypatch.setattr(cu, "plan_tasks", lambda entries, *a: seen.extend(entries) or [])
    out = tmp_path / "r.jsonl"
    assert cu.main(["--out", str(out), "--family", "gemm_fp8", "--every", "7"]) == 0
    assert [e.key for e in seen] == [e.key for e in cs.space("gemm_fp8")[::7]]


def test_compile_record_reads_the_built_binary_too(monkeypatch, tmp_path: Path) -> None:
    """Plain `ptxas -v` and the binary Triton built (its own ptxas options) both recorded."""
    from types import SimpleNamespace

    from benchmarks.common import bench_compile
    from ws_solver.triton.toolchain import binary_usage as bu

    kernel = SimpleNamespace(asm={"ptx": "PTX", "cubin": b"CUBIN", "llir": ""})
    kernel.metadata = SimpleNamespace(_asdict=lambda: {"shared": 1024, "tmem_size": 0})
    monkeypatch.setattr(bench_compile, "compile_job", lambda *a: (kernel, {"compile_s": 1.0}))
    monkeypatch.setattr(bu, "ptx_usage", lambda ptx, cap: bu.BinaryUsage(255, 48, 48, 48))
    monkeypatch.setattr(bu, "cubin_usage", lambda cubin: bu.BinaryUsage(255, 96))
    rec = cu._compile_record("gemm_tma", "x", "builtin", 100, tmp_path)
    assert rec["ptxas"]["stack_bytes"] == 48
    assert rec["cubin"] == {"registers": 255, "stack_bytes": 96}
    assert "unlaunchable" not in rec
    kernel.metadata = SimpleNamespace(_asdict=lambda: {"shared": 1024, "tmem_size": 768})
    rec = cu._compile_record("gemm_tma", "x", "builtin", 100, tmp_path)
    assert "768 columns of tensor memory" in rec["unlaunchable"]

    def broken(cubin: bytes) -> bu.BinaryUsage:
        raise bu.UsageUnavailable("cuobjdump printed no resource usage")

    monkeypatch.setattr(bu, "cubin_usage", broken)
    rec = cu._compile_record("gemm_tma", "x", "builtin", 100, tmp_path)
    assert "cubin" not in rec and rec["cubin_error"].startswith("UsageUnavailable")
