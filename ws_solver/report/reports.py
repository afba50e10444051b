"""The table `ws-solver reports` prints: one row per compile of a compile log
(``ws_solver.triton.dropin.reportlog``), then totals and the processes that stayed off."""

from __future__ import annotations

from collections import Counter

from ..core.wording import count
from ..triton.dropin.reportlog import Row, Summary

HEADER = ("pid", "kernel", "sm", "asked", "used", "plans", "fb", "decision", "stock", "rule", "s")


def cells(row: Row) -> tuple[str, ...]:
    return (
        str(row.pid),
        row.kernel,
        str(row.capability),
        row.asked,
        row.used + (" (skipped)" if _skipped(row) else ""),
        row.plans,
        str(row.fallbacks),
        row.decision or "?",
        row.stock,
        row.rule,
        f"{row.wall_s:.1f}",
    )


def _skipped(row: Row) -> bool:
    return any(n.startswith("skipped:") for n in row.notes)


def table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def render(name: str, summary: Summary) -> str:
    rows = summary.rows
    pids = {r.pid for r in rows} | set(summary.enabled_pids) | {p for p, _ in summary.off}
    lines = [
        f"{name}: {count(len(rows), 'compile')} in "
        f"{count(len({r.pid for r in rows}), 'process', 'processes')}; "
        f"{count(len(summary.enabled_pids), 'process', 'processes')} switched on from the "
        f"environment, {len(summary.off)} left it off "
        f"({count(len(pids), 'process', 'processes')} in all)"
    ]
    if rows:
        lines += ["", table([HEADER, *(cells(r) for r in rows)]), ""]
        used = Counter(r.used for r in rows)
        lines.append("used: " + ", ".join(f"{k} {v}" for k, v in sorted(used.items())))
        fell = sum(1 for r in rows if r.fallbacks)
        differs = sum(1 for r in rows if r.stock not in ("", "same"))
        lines.append(
            f"{count(fell, 'compile')} fell back at least once; stock Triton decided otherwise on "
            f"{differs}"
        )
    for pid, reason in summary.off:
        lines.append(f"off in pid {pid}: {reason}")
    return "\n".join(lines) + "\n"
