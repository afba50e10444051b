"""benchmarks/common/bench_compile.py: one compile per child process, and what comes back when a
child fails (CPU only: compiled for sm_90, nothing launched)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("triton")

from benchmarks.common.bench_compile import Job, compile_in_subprocess, compile_many
from corpus import kernels as corpus_kernels

pytestmark = pytest.mark.triton

CONFIG = next(iter(corpus_kernels.load("row_reduce").CONFIGS))


def test_a_child_compiles_and_names_its_cubin(tmp_path: Path) -> None:
    record = compile_in_subprocess(Job("row_reduce", CONFIG, "builtin"), tmp_path, 90, False)
    assert "error" not in record, record
    assert record["job"] == f"row_reduce.{CONFIG}.builtin"
    assert len(record["binary"]) == 16 and record["num_warps"] >= 1


def test_a_failing_child_is_a_record_not_a_crash(tmp_path: Path) -> None:
    records = compile_many(
        [Job("row_reduce", CONFIG, "builtin"), Job("row_reduce", CONFIG, "no_such_strategy")],
        tmp_path,
        90,
        2,
        False,
    )
    assert "error" not in records[f"row_reduce.{CONFIG}.builtin"]
    failed = records[f"row_reduce.{CONFIG}.no_such_strategy"]["error"]
    assert "compile process died" in failed and "no_such_strategy" in failed
