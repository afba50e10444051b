"""Statistics the benchmark reports share (no third-party imports)."""

from __future__ import annotations

import statistics

NOISE = 0.02  # below this relative difference two timings are a tie (gpu-benchmarking.md)


def ranks(values: list[float]) -> list[float]:
    """0-based ranks; tied values get their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in order[i : j + 1]:
            out[k] = (i + j) / 2
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Rank correlation (ties get their mean rank); None below 3 points or for a constant."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else None


# Student's t, two-sided 95%, by degrees of freedom (1-30); beyond 30 the normal 1.96.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
_T95 += (2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)
_T95 += (2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def mean_interval(values: list[float]) -> tuple[float, float, float] | None:
    """(mean, low, high): the two-sided 95% t interval of the mean of independent values
    (e.g. one median per GPU); None below 2 values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    half = t * sd / n**0.5
    return mean, mean - half, mean + half


def spread(times: list[float]) -> float:
    """(max - min) / median of a binary's rounds."""
    med = statistics.median(times)
    return (max(times) - min(times)) / med if med else 0.0


def tie(a: dict, b: dict) -> bool:
    """Whether two binaries' medians are within the larger spread (at least NOISE)."""
    limit = max(NOISE, a["spread"], b["spread"])
    return abs(a["ms"] - b["ms"]) / min(a["ms"], b["ms"]) <= limit
