"""The `ws-solver tune` report: Markdown tables from the tune document (JSON)."""

from __future__ import annotations

import json

from ..core.wording import count


def to_json(document: dict) -> str:
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}%"


def _spread(x: float | None) -> str:
    return "" if x is None else f" (±{100 * x / 2:.1f}%)"


def to_markdown(document: dict) -> str:
    env = document.get("environment", {})
    lines = [
        "# ws-solver tune",
        "",
        f"- device: {env.get('device', '?')}; Triton {env.get('triton', '?')}, torch "
        f"{env.get('torch', '?')}; ws_solver {env.get('ws_solver', '?')} (revision "
        f"{env.get('revision', '?')})",
        f"- candidates: {', '.join(f'`{c}`' for c in document.get('candidates', []))}; "
        f"reference `{document.get('reference', '')}`",
        f"- tuning: {document.get('rounds')} or more interleaved do_bench rounds per distinct "
        "binary (whole cycles of the order, each round starting one binary later); "
        f"recheck: {document.get('recheck_rounds')} or more rounds, timed separately after "
        "the choice",
        f"- Triton caches warmed by {document.get('jobs', 1)} parallel compile jobs first"
        if document.get("jobs", 1) > 1
        else "- candidates compiled in the tuning process (cold caches)",
        "",
        "ms: the winner's recheck median (± half its spread over the rounds). "
        "`regret`: the winner's recheck median over the fastest recheck median − 1; `vs none`, "
        "`vs triton`: the winner's recheck median against theirs (negative: faster). "
        "Tuning seconds: compile (first launches) / check / timing.",
        "",
        "| kernel | config | binaries | winner | ms | fastest in recheck | regret | vs none "
        "| vs triton | discarded | tuning s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in document.get("results", []):
        if r.get("error"):
            lines.append(f"| {r['kernel']} | {r['config']} | - | error: {r['error']} |" + " |" * 7)
            continue
        t = r["tuning"]
        lost = [c["name"] for c in r["candidates"] if c["status"] in ("discarded", "failed")]
        lines.append(
            f"| {r['kernel']} | {r['config']} | {r['binaries']} | `{r['winner']}` "
            f"| {_ms(r['winner_ms'])}{_spread(r.get('winner_spread'))} "
            f"| `{r['fastest']}` {_ms(r['fastest_ms'])} "
            f"| {_pct(r['regret'])} | {_pct(r['vs_none'])} | {_pct(r['vs_triton'])} "
            f"| {', '.join(lost) or '-'} | {t['total_s']:.1f} ({t['compile_s']:.1f} / "
            f"{t['check_s']:.1f} / {t['bench_s']:.1f}) |"
        )
    lines += ["", summary_line(document.get("summary", {})), "", *candidate_tables(document)]
    return "\n".join(lines) + "\n"


def summary_line(summary: dict) -> str:
    if not summary:
        return ""
    return (
        f"{count(summary['configs'], 'config')} tuned, {summary['failed']} failed; the winner is "
        f"within 1% of the fastest recheck in {summary['within_1pct']} of {summary['configs']}; "
        f"largest regret {_pct(summary['max_regret'])}; tuning time per config: median "
        f"{summary['median_tuning_s']:.1f} s, max {summary['max_tuning_s']:.1f} s"
    )


def candidate_tables(document: dict) -> list[str]:
    """Per config: every candidate's status, binary, tuning and recheck medians."""
    lines = ["## Candidates per config", ""]
    for r in document.get("results", []):
        if r.get("error"):
            continue
        lines += [
            f"### {r['kernel']} {r['config']}",
            "",
            "| candidate | status | built with | binary | tuning ms | recheck ms | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in r["candidates"]:
            note = c.get("reason") or (f"= {c['same_as']}" if c.get("same_as") else "")
            lines.append(
                f"| `{c['name']}` | {c['status']} | {c.get('strategy_used') or '-'} "
                f"| {c.get('binary') or '-'} | {_ms(c.get('median_ms'))} "
                f"| {_ms(r['recheck_ms'].get(c['name']))} | {note} |"
            )
        lines.append("")
    return lines
