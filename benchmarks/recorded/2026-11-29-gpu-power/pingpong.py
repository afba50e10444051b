"""Make explicit ping-pong variants of the wgrelease'd PTX of attention d128 s2 (optimal plan)."""

import sys
from pathlib import Path

src = Path(sys.argv[1]).read_text()
out = sys.argv[2]


def once(text, anchor, new, after=True, start=0):
    i = text.index(anchor, start)
    assert text.count(anchor, start) >= 1
    j = i + len(anchor) if after else i
    return text[:j] + new + text[j:], j + len(new)


def loop_bounds(text):
    a = text.index("$L__BB0_13:")
    b = text.index("$L__BB0_14:")
    return a, b


def variant(kind):
    t = src
    t, _ = once(t, ".reg .b64 \t%rd<41>;\n", "\t.reg .pred \t%pq<4>;\n")
    pre = "\tsetp.lt.u32 \t%pq0, %r1, 128;\n"
    a, b = loop_bounds(t)
    fence1 = t.index("wgmma.fence.sync.aligned;", a)
    commit1 = t.index("wgmma.commit_group.sync.aligned;", a)
    fence2 = t.index("wgmma.fence.sync.aligned;", commit1)
    commit2 = t.index("wgmma.commit_group.sync.aligned;", fence2)
    assert commit2 < b and t.count("wgmma.fence.sync.aligned;", a, b) == 2
    edits = []  # (position, text)
    L = len("wgmma.commit_group.sync.aligned;")
    if kind == "pp":  # turns of [P.V(j-1), S(j)]
        pre += "\t@!%pq0 bar.sync \t6, 256;\n"
        edits += [(commit1 + L, "\n\t@%pq0 bar.arrive \t6, 256;\n\t@!%pq0 bar.arrive \t5, 256;")]
        edits += [(fence2, "@%pq0 bar.sync \t5, 256;\n\t@!%pq0 bar.sync \t6, 256;\n\t")]
        exit_ = "\t@%pq0 bar.arrive \t6, 256;\n"
    elif kind == "pps":  # turns of S(j) only
        pre += "\t@!%pq0 bar.arrive \t5, 256;\n"
        edits += [(fence1, "@%pq0 bar.sync \t5, 256;\n\t@!%pq0 bar.sync \t6, 256;\n\t")]
        edits += [(commit1 + L, "\n\t@%pq0 bar.arrive \t6, 256;\n\t@!%pq0 bar.arrive \t5, 256;")]
        exit_ = "\t@%pq0 bar.sync \t5, 256;\n"
    elif kind == "st":  # one-time stagger: WG1 starts after WG0 issued its first S
        pre += "\tmov.pred \t%pq1, %pq0;\n\t@!%pq0 bar.sync \t6, 256;\n"
        edits += [(commit1 + L, "\n\t@%pq1 bar.arrive \t6, 256;\n\tsetp.ne.u32 \t%pq1, %r1, %r1;")]
        exit_ = "\t@%pq1 bar.arrive \t6, 256;\n"
    else:
        raise SystemExit(kind)
    for pos, text in sorted(edits, reverse=True):
        t = t[:pos] + text + t[pos:]
    t, _ = once(t, "$L__BB0_14:                             // %._crit_edge235\n", exit_)
    t, _ = once(t, "\t@%p15 bra \t$L__BB0_14;\n", pre, after=False)
    return t


for kind in ("pp", "pps", "st"):
    Path(f"{out}_{kind}.ptx").write_text(variant(kind))
