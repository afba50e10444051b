"""The census table: per file (target x Triton version), where the drop-in's `optimal` kernel
spills and stock's launchable kernel does not. Stock's kernel counts as built only when it
fits a block's shared memory (232,448 B): over that it fails at launch.

    python3 summary.py FILE [FILE ...]                # one row per file (summary.md)
    python3 summary.py --by-family [--details] FILE ...

`--by-family`: a row per family x target x Triton version (from the records, not the file
names), and a table of the key column by family. `--details`: the decision check's rules that
fired, where `optimal` kept stock's kernel and why, where ours was not built and stock's was,
and each configuration of the key column with both kernels' registers and spills
(2026-12-07-census-forms).
"""

import json
import sys
from collections import Counter
from pathlib import Path

SHARED = 232_448


def spilled(record: dict | None, binary: bool = False) -> int:
    """Bytes spilled: plain `ptxas -v` on the PTX, or with `binary` the stack of the binary
    Triton built (records from 2026-12-07-census-forms on; Triton 3.9 assembles with
    --regAllocOptLevel=2), where the record has it."""
    record = record or {}
    if binary and "cubin" in record:
        return record["cubin"].get("stack_bytes") or 0
    p = record.get("ptxas") or {}
    return max(p.get("stack_bytes") or 0, p.get("spill_store_bytes") or 0)


def launchable(record: dict | None) -> bool:
    """Built, within a block's shared memory, and not found unlaunchable by the drop-in's own
    test (records from configspace_usage's `unlaunchable` field on: TMEM, lone trap)."""
    return bool(
        record
        and record.get("ok")
        and (record.get("shared_bytes") or 0) <= SHARED
        and not record.get("unlaunchable")
    )


def load(paths: list[str], key=None) -> dict:
    """{group: {config: {strategy: record}}}, the last record of each winning; `key(path,
    record)` names the group (default: the file's name)."""
    groups: dict = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            if r["kind"] == "compile":
                g = key(path, r) if key else Path(path).name
                groups.setdefault(g, {}).setdefault(r["config"], {})[r["strategy"]] = r
    return groups


def counts(by: dict, binary: bool = False) -> dict:
    """The table's columns for one group's {config: {strategy: record}}."""
    c = dict.fromkeys(("stock_ok", "over", "opt_ok", "opt_spill", "kept", "same", "bad"), 0)
    c["configs"] = len(by)
    worst = []
    for key, v in sorted(by.items()):
        b, o = v.get("builtin"), v.get("optimal")
        c["stock_ok"] += launchable(b)
        c["over"] += bool(b and b.get("ok") and (b.get("shared_bytes") or 0) > SHARED)
        if o and o.get("ok"):
            c["opt_ok"] += 1
            c["opt_spill"] += spilled(o, binary) > 0
            c["kept"] += o.get("dropin_strategy") == "stock"
            c["same"] += bool(b and b.get("ok") and b.get("binary") == o.get("binary"))
            if spilled(o, binary) and launchable(b) and not spilled(b, binary):
                c["bad"] += 1
                worst.append(key)
    return c | {"worst": worst}


HEADER = (
    "| configs | stock launchable | stock over shared memory | optimal built |"
    " optimal spills | **spills where stock's launchable kernel does not** |"
    " optimal kept stock's kernel | optimal's binary is stock's |"
)


def row(label: str, c: dict) -> str:
    return (
        f"| {label} | {c['configs']} | {c['stock_ok']} | {c['over']} | {c['opt_ok']} |"
        f" {c['opt_spill']} | **{c['bad']}** {' '.join(c['worst'])} | {c['kept']} | {c['same']} |"
    )


def _version_order(g: tuple) -> tuple:
    family, target, version = g
    return (family, int(target[2:]), tuple(int(x) for x in version.split(".")))


def by_family(paths: list[str]) -> None:
    groups = load(paths, key=lambda _, r: (r["family"], r["target"], r["triton"]))
    order = sorted(groups, key=_version_order)
    print("Spills: the binary Triton built (its cubin's stack), where the records have it.")
    print()
    print("| family | target | Triton " + HEADER)
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for g in order:
        print(row(" | ".join(g), counts(groups[g], binary=True)))
    columns = sorted({g[1:] for g in groups}, key=lambda t: (int(t[0][2:]), t[1]))
    print()
    print(
        "**Spills where stock's launchable kernel does not** / configs sampled (the binary;"
        " plain `ptxas -v` in brackets where it differs):"
    )
    print()
    print("| family | " + " | ".join(f"{t} {v}" for t, v in columns) + " |")
    print("|---|" + "--:|" * len(columns))
    for family in dict.fromkeys(g[0] for g in order):
        cells = []
        for t, v in columns:
            if (family, t, v) not in groups:
                cells.append("-")
                continue
            c = counts(groups[(family, t, v)], binary=True)
            plain = counts(groups[(family, t, v)])["bad"]
            other = f" ({plain})" if plain != c["bad"] else ""
            cells.append(f"**{c['bad']}**{other} / {c['configs']}")
        print(f"| {family} | " + " | ".join(cells) + " |")


def _usage(r: dict | None) -> str:
    if not r or not r.get("ok"):
        return "not built" + (f" ({str(r.get('error'))[:80]})" if r and r.get("error") else "")
    p = r.get("ptxas") or {}
    text = f"{p.get('registers')} regs, {spilled(r)} B spilled"
    if "cubin" in r:
        text = f"binary {r['cubin']['registers']} regs, {spilled(r, True)} B stack; plain -v {text}"
    if (r.get("shared_bytes") or 0) > SHARED:
        text += f", {r['shared_bytes']} B shared (over)"
    return text + (", specialized" if r.get("warp_specialize_ops") else "")


def details(paths: list[str]) -> None:
    groups = load(paths, key=lambda _, r: (r["target"], r["triton"]))
    order = sorted(groups, key=lambda t: (int(t[0][2:]), t[1]))
    print()
    print("## The decision check's rules that fired (`optimal` records)")
    print()
    rules = {g: Counter() for g in order}
    for g in order:
        for v in groups[g].values():
            o = v.get("optimal")
            if o and o.get("ok"):
                rules[g][(o.get("decision") or {}).get("rule") or "(no decision record)"] += 1
            elif o:
                rules[g]["(optimal not built)"] += 1
    names = sorted({n for c in rules.values() for n in c})
    print("| rule | " + " | ".join(f"{t} {v}" for t, v in order) + " |")
    print("|---|" + "--:|" * len(order))
    for n in names:
        print(f"| {n} | " + " | ".join(str(rules[g][n]) for g in order) + " |")
    print()
    print("## Where `optimal` kept stock's kernel")
    print()
    for g in order:
        for config, v in sorted(groups[g].items()):
            o = v.get("optimal") or {}
            if o.get("dropin_strategy") == "stock":
                d = o.get("decision") or {}
                print(f"- {config} {' '.join(g)}: `{d.get('rule')}`: {d.get('evidence')}")
    print()
    print("## Where ours was not built and stock's kernel was")
    print()
    print("(`stock: ours not built`, or the `optimal` compile itself failed while stock's built)")
    print()
    for g in order:
        for config, v in sorted(groups[g].items()):
            o, b = v.get("optimal") or {}, v.get("builtin")
            rule = (o.get("decision") or {}).get("rule")
            if rule == "stock: ours not built" or (not o.get("ok") and b and b.get("ok")):
                did = f"`{rule}`, kept {o.get('dropin_strategy')}" if o.get("ok") else "failed"
                print(f"- {config} {' '.join(g)}: optimal {did}; stock {_usage(b)}; {_usage(o)}")
    print()
    print("## Stock's kernel as the decision check built it vs the census's `builtin` compile")
    print()
    print("(specialized or not, or not built; a difference over shared memory is the check's")
    print("shared-memory rule: the kernel would not launch)")
    print()
    for g in order:
        agree, differ = 0, []
        for config, v in sorted(groups[g].items()):
            o, b = v.get("optimal") or {}, v.get("builtin") or {}
            if not o.get("decision"):
                continue
            probe = o["decision"].get("stock_specialized")
            census = bool(b.get("warp_specialize_ops")) if b.get("ok") else None
            if probe == census:
                agree += 1
            else:
                differ.append(f"{config} (check: {probe}, census: {census}; {_usage(b)})")
        print(
            f"- {' '.join(g)}: {agree} agree, {len(differ)} differ"
            + "".join(f"\n  - {d}" for d in differ)
        )
    print()
    print("## `optimal` spills where stock's launchable kernel does not (binary or plain -v)")
    print()
    for g in order:
        for config, v in sorted(groups[g].items()):
            o, b = v.get("optimal"), v.get("builtin")
            if not (o and o.get("ok") and launchable(b)):
                continue
            which = [
                name
                for name, binary in (("binary", True), ("plain -v", False))
                if spilled(o, binary) and not spilled(b, binary)
            ]
            if which:
                d = o.get("decision") or {}
                print(
                    f"- {config} {' '.join(g)} ({', '.join(which)}): optimal {_usage(o)} (kept"
                    f" {o.get('dropin_strategy')}, `{d.get('rule')}`: {d.get('evidence')});"
                    f" stock {_usage(b)}"
                )


def main(argv: list[str]) -> None:
    flags = {a for a in argv if a.startswith("--")}
    paths = [a for a in argv if not a.startswith("--")]
    if "--by-family" in flags:
        by_family(paths)
    else:
        print("| file " + HEADER)
        print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        for name, by in load(paths).items():
            print(row(name, counts(by)))
    if "--details" in flags:
        details(paths)


if __name__ == "__main__":
    main(sys.argv[1:])
