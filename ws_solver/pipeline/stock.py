"""Stock Triton's decision for a dumped loop: warp-specialized or not, or stock fails.

Recorded when a corpus dump is made (`corpus/stock.py`: the kernel compiled as Triton compiles
it without ws_solver, on the CPU, as far as ptxas) and read here for `compare`. A dump
folder's `index.json` (a list of entries, corpus/dump.py; or {"dumps": [...]},
corpus/configspace.py) gives each file a `stock` record:

- `triton`, `target`: the Triton release and target the dump and stock's build are for;
- `loops`: per `tt.warp_specialize` loop of the dump, in order, whether stock's kernel runs
  it warp-specialized (null where its TTGIR does not say), or `error`: why stock fails;
- `dump_sha256`: the dump text the record is for.

A file with no record, or whose text is not the recorded one (edited, or a user's own), has
no stock decision: "unknown", never a guess.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core import readers

INDEX_NAME = "index.json"

SPECIALIZED = "specialized"
UNSPECIALIZED = "unspecialized"
FAILS = "fails"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class StockDecision:
    """Stock Triton's build of one dumped kernel."""

    triton: str
    target: str  # "sm90", "sm100"
    loops: tuple[bool | None, ...] = ()  # per WS loop of the dump; None: not known
    error: str = ""  # why stock fails ("" when it compiles)
    dump_sha256: str = ""
    warp_specialize_ops: int = 0

    def decision(self, loop: int) -> str:
        """SPECIALIZED, UNSPECIALIZED, FAILS or UNKNOWN for the dump's loop `loop`."""
        if self.error:
            return FAILS
        if loop >= len(self.loops) or self.loops[loop] is None:
            return UNKNOWN
        return SPECIALIZED if self.loops[loop] else UNSPECIALIZED

    def to_dict(self) -> dict:
        out: dict = {"triton": self.triton, "target": self.target}
        out["dump_sha256"] = self.dump_sha256
        if self.error:
            out["error"] = self.error
        else:
            out["loops"] = list(self.loops)
            out["warp_specialize_ops"] = self.warp_specialize_ops
        return out

    @staticmethod
    def from_dict(data: dict) -> StockDecision:
        return StockDecision(
            triton=str(data["triton"]),
            target=str(data["target"]),
            loops=tuple(data.get("loops", ())),
            error=str(data.get("error", "")),
            dump_sha256=str(data.get("dump_sha256", "")),
            warp_specialize_ops=int(data.get("warp_specialize_ops", 0)),
        )


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def index_entries(folder: Path) -> dict[str, dict]:
    """{file name: index entry} of a dump folder's index.json; {} without a readable one."""
    try:
        data = readers.load(folder / INDEX_NAME, readers.MAX_INPUT_BYTES, follow=True)
    except (OSError, ValueError):  # none, not a regular file, too large or deep, not JSON
        return {}
    entries = data.get("dumps", []) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        return {}
    return {e["file"]: e for e in entries if isinstance(e, dict) and "file" in e}


def recorded(path: Path, text: str) -> StockDecision | None:
    """Stock's decision recorded for the dump at `path`, when `text` is the recorded dump."""
    entry = index_entries(path.parent).get(path.name)
    if not entry or not isinstance(entry.get("stock"), dict):
        return None
    try:
        found = StockDecision.from_dict(entry["stock"])
    except (KeyError, TypeError, ValueError):
        return None
    return found if found.dump_sha256 == digest(text) else None


def loop_stock(found: StockDecision | None, loop: int, ours_specialized: bool) -> dict:
    """A compare record's `stock`: stock's decision for the loop and whether ours differs
    (null where stock's decision is not known, or stock fails)."""
    if found is None:
        return {"decision": UNKNOWN, "differs": None}
    decision = found.decision(loop)
    out: dict = {"decision": decision, "triton": found.triton, "target": found.target}
    if decision == FAILS:
        out["reason"] = found.error
    known = decision in (SPECIALIZED, UNSPECIALIZED)
    out["differs"] = (ours_specialized != (decision == SPECIALIZED)) if known else None
    out["ours"] = SPECIALIZED if ours_specialized else UNSPECIALIZED
    return out


def stock_summary(stock: Sequence[dict]) -> dict:
    """Counts over compare records' `stock` entries: decisions, and where ours differs."""
    decisions = Counter(s["decision"] for s in stock)
    differs = [s for s in stock if s.get("differs")]
    recorded_for = sorted({f"{s['triton']} {s['target']}" for s in stock if "triton" in s})
    return {
        "loops": len(stock),
        "known": decisions[SPECIALIZED] + decisions[UNSPECIALIZED],
        "specialized": decisions[SPECIALIZED],
        "fails": decisions[FAILS],
        "unknown": decisions[UNKNOWN],
        "differs": len(differs),
        "ours_only": sum(s["ours"] == SPECIALIZED for s in differs),
        "stock_only": sum(s["ours"] == UNSPECIALIZED for s in differs),
        "recorded_for": recorded_for,
    }
