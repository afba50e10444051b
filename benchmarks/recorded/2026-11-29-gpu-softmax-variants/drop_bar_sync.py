"""Drop chosen CTA barriers (`bar.sync 0;`) from the wgmma loops of a PTX file, as run on the GPU.

    python3 drop_bar_sync.py IN.ptx OUT.ptx [LOOP:IDX[,IDX...] ...]

LOOP counts the loops that issue wgmmas and IDX the barriers inside one, both from 0; with
no LOOP:IDX the loops and their barriers are listed.
"""

import re
import sys


def wgmma_loops(lines: list[str]) -> list[tuple[int, int]]:
    """(label line, back-branch line) of every loop whose body issues a wgmma."""
    loops = []
    for i, line in enumerate(lines):
        label = re.match(r"(\$L__BB\d+_\d+):", line)
        if not label:
            continue
        back = re.compile(rf"bra(\.uni)?\s+{re.escape(label.group(1))};")
        end = next((j for j in range(i + 1, len(lines)) if back.search(lines[j])), None)
        if end is not None and any("wgmma.mma_async" in s for s in lines[i:end]):
            loops.append((i, end))
    return loops


def main(argv: list[str]) -> None:
    with open(argv[0]) as src:
        lines = src.read().split("\n")
    loops = wgmma_loops(lines)
    is_bar = re.compile(r"bar\.sync\s+0;")
    bars = [[k for k in range(i, j) if is_bar.fullmatch(lines[k].strip())] for i, j in loops]
    if len(argv) <= 2:
        for n, ((i, j), found) in enumerate(zip(loops, bars, strict=True)):
            print(f"loop {n}: lines {i + 1}-{j + 1}, bar.sync at {[k + 1 for k in found]}")
        return
    drop = set()
    for spec in argv[2:]:
        loop, indices = spec.split(":")
        drop.update(bars[int(loop)][int(x)] for x in indices.split(","))
    with open(argv[1], "w") as dst:
        dst.write("\n".join(line for k, line in enumerate(lines) if k not in drop))
    print("dropped lines", sorted(k + 1 for k in drop))


if __name__ == "__main__":
    main(sys.argv[1:])
