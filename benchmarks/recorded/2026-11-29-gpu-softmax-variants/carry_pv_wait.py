"""Hand edit of the final TTGIR of the LATE (FlashAttention-3 order) loop, as run on the GPU.

    python3 carry_pv_wait.py IN.ttgir OUT.ttgir SINK_S

The P·V wgmma's wait (pendings = 0) moves from the end of the iteration to just before the
next iteration's rescale of the accumulator, and after the loop: P·V stays in flight across
the back edge, under the next softmax. With SINK_S = 1 the wait for S (pendings = 1) also
moves down to the yield, after the TMA issue.
"""

import re
import sys


def _index(lines: list[str], start: int, stop: int, pred) -> int:
    return next(i for i in range(start, stop) if pred(lines[i]))


def carry(text: str, sink_s: bool) -> str:
    lines = text.split("\n")
    i_for = _index(lines, 0, len(lines), lambda s: "scf.for" in s and "iter_args(" in s)
    loop_result = re.match(r"\s*(%\w+):\d+ = scf.for", lines[i_for]).group(1)
    acc_arg = re.search(r"iter_args\((%\w+) = ", lines[i_for]).group(1)
    acc_type = re.search(r"-> \((tensor<[^>]*>)", lines[i_for]).group(1)
    i_yield = _index(lines, i_for, len(lines), lambda s: s.strip().startswith("scf.yield"))
    yielded = re.match(r"\s*scf.yield (%[\w#]+),", lines[i_yield]).group(1)
    wait_name = yielded.split("#")[0]
    i_wait = _index(lines, i_for, i_yield, lambda s: s.strip().startswith(f"{wait_name}:2 ="))
    assert "pendings = 0" in lines[i_wait]
    dot = re.search(r"warp_group_dot_wait (%\w+),", lines.pop(i_wait)).group(1)
    i_yield -= 1
    lines[i_yield] = lines[i_yield].replace(f"scf.yield {yielded},", f"scf.yield {dot},", 1)
    uses = [i for i in range(i_for + 1, i_yield) if re.search(rf"{acc_arg}\b", lines[i])]
    assert len(uses) == 1 and "arith.mulf" in lines[uses[0]], uses
    lines[uses[0]] = re.sub(rf"{acc_arg}\b", "%accw#0", lines[uses[0]])
    wait = f"ttng.warp_group_dot_wait {acc_arg} {{pendings = 0 : i32}} : {acc_type}"
    lines.insert(uses[0], f"      %accw:1 = {wait}")
    i_yield += 1
    if sink_s:
        is_s_wait = lambda s: "warp_group_dot_wait" in s and "pendings = 1" in s  # noqa: E731
        lines.insert(i_yield - 1, lines.pop(_index(lines, i_for, i_yield, is_s_wait)))
    i_end = _index(lines, i_yield, len(lines), lambda s: s.strip().startswith("}"))
    wait = f"ttng.warp_group_dot_wait {loop_result}#0 {{pendings = 0 : i32}} : {acc_type}"
    lines.insert(i_end + 1, f"    %accf:1 = {wait}")
    after = "\n".join(lines[i_end + 2 :])
    assert after.count(f"{loop_result}#0") == 1
    return "\n".join(lines[: i_end + 2]) + "\n" + after.replace(f"{loop_result}#0", "%accf#0")


if __name__ == "__main__":
    with open(sys.argv[1]) as src:
        text = carry(src.read(), sys.argv[3] == "1")
    with open(sys.argv[2], "w") as dst:
        dst.write(text)
