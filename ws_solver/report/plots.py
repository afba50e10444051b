"""Plots of a comparison document, as PNG bytes (matplotlib, drawn off-screen: no display
needed). matplotlib is imported only when a plot is drawn: it takes a second to load."""

from __future__ import annotations

import io

from ..core.wording import count
from .compare import _short_file

HEURISTIC_COLOR = "#f28e2b"
OPTIMAL_COLOR = "#4e79a7"


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    # Fixed metadata: the same document gives the same bytes.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def ii_plot(document: dict) -> bytes:
    """Heuristic and optimal II per loop, as paired horizontal bars."""
    loops = document["loops"]
    labels = [f"{_short_file(r['file'])} #{r['loop']}" for r in loops]
    n = max(len(loops), 1)
    figure = _figure(10, 1.2 + 0.28 * n)
    ax = figure.add_subplot(1, 1, 1)
    ys = list(range(len(loops)))
    h = [r["heuristic"]["ii"] for r in loops]
    o = [r["optimal"]["ii"] for r in loops]
    ax.barh([y - 0.2 for y in ys], h, height=0.4, color=HEURISTIC_COLOR, label="heuristic")
    ax.barh([y + 0.2 for y in ys], o, height=0.4, color=OPTIMAL_COLOR, label="optimal")
    for y, r in zip(ys, loops, strict=True):
        if r["better"] == "optimal":
            ax.text(
                r["heuristic"]["ii"] + max(h) * 0.01,
                y,
                _reduction(r["ii_reduction"]),
                va="center",
                fontsize=7,
                color="#333",
            )
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(len(loops) - 0.4, -0.6)  # first loop on top, no empty bands
    if loops:
        ax.set_xlim(0, max(max(h), max(o)) * 1.12)
    ax.set_xlabel("modeled II (cycles per iteration)")
    ax.set_title("Heuristic vs optimal modeled II per loop (lower is better)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


def _reduction(x: float) -> str:
    return f"−{x:.0%}" if x >= 0.01 else f"−{x:.1%}"


def solve_time_histogram(document: dict) -> bytes:
    """Wall time of the optimal strategy per loop, with the time limit marked."""
    times = [t["optimal_wall_s"] for t in document["timing"]["loops"]]
    figure = _figure(7, 3.6)
    ax = figure.add_subplot(1, 1, 1)
    limit = document["settings"]["time_limit"]
    top = max([*times, limit]) * 1.1 if times else limit
    bins = [top * i / 24 for i in range(25)]
    ax.hist(times, bins=bins, color=OPTIMAL_COLOR, edgecolor="white")
    ax.axvline(limit, color="#e15759", linestyle="--", linewidth=1)
    ax.text(limit, ax.get_ylim()[1] * 0.95, " time limit", color="#e15759", fontsize=8, va="top")
    ax.set_xlabel("wall time per loop, optimal strategy (s)")
    ax.set_ylabel("loops")
    jobs = document["timing"]["jobs"]
    ax.set_title(f"Solve time ({count(len(times), 'loop')}, {count(jobs, 'job')})")
    ax.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


PLOTS = (
    ("ii.png", "Heuristic vs optimal II per loop", ii_plot),
    ("solve_time.png", "Solve-time histogram", solve_time_histogram),
)


def render_plots(document: dict) -> list[tuple[str, str, bytes]]:
    """(file name, caption, PNG) of every plot; none when there is no loop to show."""
    if not document["loops"]:
        return []
    return [(name, caption, draw(document)) for name, caption, draw in PLOTS]
