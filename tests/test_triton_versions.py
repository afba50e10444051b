"""The supported-Triton table, the one-line refusal of other versions, and the stages hook
that serves both calling conventions (no Triton needed)."""

from __future__ import annotations

import hashlib
import sys
import types

import pytest

from ws_solver.triton.toolchain import versions


def test_supported_versions_are_3_6_and_3_9() -> None:
    assert list(versions.SUPPORTED) == ["3.6.0", "3.9.0"]
    assert versions.lookup("3.9.0").corpus_dir == "ttgir-3.9"
    assert versions.lookup("3.6.0+git1234").name == "3.6.0"  # a local build of a release


@pytest.mark.parametrize("version", ["3.5.0", "3.7.0", "3.8.0", "3.10.0"])
def test_other_versions_get_one_line_naming_the_supported(version: str) -> None:
    with pytest.raises(versions.UnsupportedTritonVersion) as caught:
        versions.lookup(version)
    message = str(caught.value)
    assert "\n" not in message
    assert f"Triton {version} is not supported" in message
    assert "3.6.0, 3.9.0" in message


def test_the_table_differs_only_where_make_ttgir_does() -> None:
    old, new = versions.SUPPORTED["3.6.0"], versions.SUPPORTED["3.9.0"]
    assert not old.cga_layouts and new.cga_layouts
    assert old.prefetch and not new.prefetch
    assert (old.tmem_load_reduce, old.lower_clc, old.hoist_mbarrier_lifecycle) == (False,) * 3
    assert (new.tmem_load_reduce, new.lower_clc, new.hoist_mbarrier_lifecycle) == (True,) * 3


def test_stages_hook_installs_and_answers_the_cache_key() -> None:
    seen = []
    hook = versions.stages_hook(lambda *args: seen.append(args), "ws_solver-heuristic-abc")
    key, digest = hook()  # 3.9 asks before compiling
    assert key == "ws_solver-heuristic-abc"
    assert digest == hashlib.sha256(key.encode()).hexdigest()
    assert hook("backend", {}, "options", "language", 90) is None
    assert seen == [("backend", {}, "options", "language", 90)]
    assert versions.hook_key(hook) == key
    assert versions.hook_key(None) == ""
    assert versions.hook_key(lambda backend, stages, options, language, cap: None) == ""


def test_enable_refuses_an_unsupported_triton(monkeypatch) -> None:
    import ws_solver.triton as wst

    versions.installed.cache_clear()  # resolved once per process: forget the real one
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(__version__="3.7.0"))
    try:
        with pytest.raises(wst.UnsupportedTritonVersion, match="supported: 3.6.0, 3.9.0"):
            wst.enable("heuristic")
    finally:
        versions.installed.cache_clear()


def test_the_installed_version_is_resolved_once(monkeypatch) -> None:
    versions.installed.cache_clear()
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(__version__="3.9.0+git1"))
    try:
        first = versions.installed()
        monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(__version__="3.6.0"))
        assert versions.installed() is first and first.name == "3.9.0"
    finally:
        versions.installed.cache_clear()


def test_model_and_drop_in_read_one_table() -> None:
    from ws_solver.model.lowering_facts import LOWERING, lowering_facts

    assert LOWERING is versions.SUPPORTED
    for name in versions.SUPPORTED:
        assert lowering_facts(name) is versions.lookup(name)


def test_cli_exits_2_with_one_line(monkeypatch, capsys) -> None:
    from ws_solver.cli import main

    def run(args):
        raise versions.UnsupportedTritonVersion("Triton 3.7.0 is not supported (supported: x)")

    monkeypatch.setattr("ws_solver.cli.build_parser", lambda: _parser(run))
    assert main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Triton 3.7.0 is not supported" in err[0]


def _parser(run):
    import argparse

    parser = argparse.ArgumentParser()
    parser.set_defaults(run=run)
    return parser
