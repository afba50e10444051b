"""The ordered merge rules and the vetoes that override them.

An edge rule looks at one crossing data edge `e` (its endpoints sit in different partitions)
and the OR-ed flags of the two partitions (`fu` for the producer side, `fv` for the consumer
side); a pair rule looks at two partitions. The engine (merge.py) applies the first rule, in
list order, that matches some crossing edge or pair and is not vetoed, merges, and starts again
from the top. The names are what `Plan.merges` records.

Vocabulary: a partition is *plain* when it holds no LOAD, STORE, MMA, TMEM or SFU op; *cheap*
when it is plain or its SFU ops are all small (<= 256 elements); *SFU-bound* ("costly") when it
holds an SFU op over more than 256 elements; *staging-only* when it holds nothing but plain ops
and writes of register data into shared/tensor memory.

Where the list departs from Triton PR #7312's (its data-flow graph and incremental merging):
- `wgmma_together`, `wgmma_registers` (sm_90 only, first): a wgmma keeps its accumulator in
  the issuing warp group's registers, so the MMAs share one consumer partition and the register
  tensors they make or take (accumulator iter args, softmax, epilogue) stay with them.
- `pointer_load_to_consumer`: Triton 3.6 crashes (NVWSInsertAref) when a pointer load's data,
  or the local_alloc staging it, is consumed in another partition.
- `staging_to_producer`: a tmem_alloc/local_alloc/tmem_store of register data belongs with
  the op computing the data (the P tile of attention, the rescaled output accumulator).
- `cheap_into_special_consumer` only fires when that consumer is the cheap partition's only
  one (else attention's alpha = exp2(m_old - m_new) would leave softmax for correction), and
  `plain_into_costly_producer` also takes cheap-SFU partitions (alpha joins softmax).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.kinds import LOCAL_ALLOC, TMEM_LOAD, NodeKind, NodeRole
from .facts import (
    LARGE_EDGE_ELEMENTS,
    LOAD,
    LOAD_FEEDS_MMA,
    LOAD_NO_MMA,
    MMA,
    MMA_REG,
    NOT_STAGING,
    NOT_VIEW,
    PTR_LOAD,
    PTR_STAGING,
    SFU,
    SFU_COSTLY,
    SPECIAL,
    STAGING,
    STORE,
    TMEM,
    TMEM_ALLOC,
    DataEdge,
)

if TYPE_CHECKING:
    from .merge import MergeState


# -- partition predicates ----------------------------------------------------------------------
def plain(f: int) -> bool:
    return not f & SPECIAL


def cheap(f: int) -> bool:
    return plain(f) or (bool(f & SFU) and not f & (SFU_COSTLY | LOAD | STORE | MMA | TMEM))


def view_only(f: int) -> bool:
    return not f & NOT_VIEW


def staging_only(f: int) -> bool:
    return bool(f & STAGING) and not f & NOT_STAGING


# -- edge rules --------------------------------------------------------------------------------
def wgmma_together(s: MergeState, a: int, b: int, fa: int, fb: int) -> bool:
    """sm_90: register-accumulator MMAs share one consumer warp group (FA3-style)."""
    return bool(fa & MMA_REG and fb & MMA_REG)


def wgmma_registers(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """sm_90: register tensors a wgmma partition makes or takes stay in it (unless LOAD)."""
    if e.value_kind != "tensor":
        return False
    return bool((fu & MMA_REG and not fv & LOAD) or (fv & MMA_REG and not fu & LOAD))


def pointer_load_to_consumer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Pointer-loaded data (and the buffer that stages it) joins its consumer (Triton 3.6's
    aref insertion crashes when it crosses partitions)."""
    return bool(s.facts.flags[e.src] & (PTR_LOAD | PTR_STAGING))


def load_to_local_alloc(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A load joins the local_alloc that puts its data in shared memory."""
    src, dst = s.graph.nodes[e.src], s.graph.nodes[e.dst]
    return src.kind == NodeKind.LOAD and dst.op_name == LOCAL_ALLOC


def view_chain(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A view joins its producer if that communicates fewer elements, else its consumer."""
    f, nodes = s.facts, s.graph.nodes
    shrinks = f.is_view(e.dst) and nodes[e.dst].elements < f.view_in_elements[e.dst]
    if shrinks and view_only(fv):
        return True  # the view joins its producer
    if f.is_view(e.src) and view_only(fu):
        return not nodes[e.src].elements < f.view_in_elements[e.src]  # ... or its consumer
    return False


def producer_to_iter_arg(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A loop-body value joins the (non-token) iter arg it is carried into."""
    dst = s.graph.nodes[e.dst]
    return e.distance == 1 and dst.role == NodeRole.ITER_ARG and dst.value_kind != "token"


def token_iter_arg_to_user(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A token iter arg joins the op that waits on it."""
    src = s.graph.nodes[e.src]
    return e.distance == 0 and src.role == NodeRole.ITER_ARG and src.value_kind == "token"


def token_if_result_to_producer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A token scf.if result joins the op that yields it."""
    dst = s.graph.nodes[e.dst]
    return dst.role == NodeRole.IF_RESULT and dst.value_kind == "token"


def cheap_into_costly_sfu(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Cheap work feeding an SFU-bound partition (exp2 over > 256 elements) joins it."""
    return cheap(fu) and bool(fv & SFU_COSTLY)


def plain_chain(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Plain ops in a straight chain (the producer feeds only this consumer) merge."""
    return plain(fu) and plain(fv) and s.facts.consumers[e.src] == (e.dst,)


def plain_into_sfu(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Plain work feeding an SFU partition joins it."""
    return plain(fu) and bool(fv & SFU) and not fv & (LOAD | STORE | MMA)


def tmem_load_to_consumer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A tmem_load joins the op that consumes the registers it fills."""
    return e.value_kind == "tensor" and s.graph.nodes[e.src].op_name == TMEM_LOAD


def tmem_to_store(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Work that reads tensor memory joins the store of its result (the epilogue)."""
    return bool(fu & TMEM and fv & STORE)


def staging_to_producer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A staging-only partition (register data into smem/TMEM) joins the data's producer."""
    return staging_only(fv) and not fu & (LOAD | MMA)


def cheap_into_special_consumer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Cheap work whose only consumer is a non-plain, non-LOAD/MMA/SFU-bound partition joins it."""
    if not cheap(fu) or plain(fv) or fv & (LOAD | MMA | SFU_COSTLY):
        return False
    return s.only_consumer(s.find(e.src), s.find(e.dst))


def plain_into_costly_producer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Cheap work joins the SFU-bound partition that feeds it."""
    return cheap(fv) and bool(fu & SFU_COSTLY)


def plain_into_producer(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Plain work joins a producer partition that is neither LOAD nor MMA."""
    return plain(fv) and not fu & (LOAD | MMA)


def store_store(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Connected STORE partitions merge."""
    return bool(fu & STORE and fv & STORE)


def plain_plain(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Connected plain partitions merge."""
    return plain(fu) and plain(fv)


def large_edge(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """Partitions (neither LOAD nor MMA) joined by an edge of > 16,384 elements merge."""
    return e.elements > LARGE_EDGE_ELEMENTS and not (fu | fv) & (LOAD | MMA)


def load_epilogue(s: MergeState, e: DataEdge, fu: int, fv: int) -> bool:
    """A LOAD whose data never reaches an MMA joins its consumer."""
    return bool(fu & LOAD_NO_MMA) and not fu & (LOAD_FEEDS_MMA | MMA)


# -- pair rules ----------------------------------------------------------------------------------
def mma_mma(s: MergeState, a: int, b: int, fa: int, fb: int) -> bool:
    """Two MMA partitions merge (one issuing stream for the tensor cores)."""
    return bool(fa & MMA and fb & MMA)


def load_load(s: MergeState, a: int, b: int, fa: int, fb: int) -> bool:
    """Two LOAD partitions (without MMAs) merge into one producer."""
    return bool(fa & LOAD and fb & LOAD) and not (fa | fb) & MMA


def plain_store(s: MergeState, a: int, b: int, fa: int, fb: int) -> bool:
    """A plain partition and a STORE partition merge."""
    return (plain(fa) and bool(fb & STORE)) or (plain(fb) and bool(fa & STORE))


def shared_tmem_alloc(s: MergeState, a: int, b: int, fa: int, fb: int) -> bool:
    """Two TMEM partitions that use one tensor-memory allocation merge."""
    return bool(fa & TMEM and fb & TMEM) and bool(s.tmem_buffers(a) & s.tmem_buffers(b))


# -- vetoes ------------------------------------------------------------------------------------
def tmem_into_mma(s: MergeState, ra: int, rb: int) -> bool:
    """Never merge TMEM work into an MMA partition (the MMA issuer is one thread)."""
    fa, fb = s.flags[ra], s.flags[rb]
    return bool((fa & MMA and fb & TMEM) or (fb & MMA and fa & TMEM))


def tmem_alloc_into_mma(s: MergeState, ra: int, rb: int) -> bool:
    """Never put a tmem_alloc into an MMA partition."""
    fa, fb = s.flags[ra], s.flags[rb]
    return bool((fa & MMA and fb & TMEM_ALLOC) or (fb & MMA and fa & TMEM_ALLOC))


VETOES: tuple[Callable[[MergeState, int, int], bool], ...] = (
    tmem_into_mma,
    tmem_alloc_into_mma,
)


@dataclass(frozen=True)
class Rule:
    name: str
    scope: str  # "edge": test(state, edge, fu, fv); "pair": test(state, a, b, fa, fb)
    test: Callable
    register_accumulator_only: bool = False  # only on targets whose MMA keeps acc in registers
    # Pair rules: the test reads the two partitions' flags alone (the engine tries one pair per
    # kind of partition), unless the rule names `partners(state, a)`: the partitions that
    # can match partition `a` (the engine tries those).
    partners: Callable | None = None

    @property
    def doc(self) -> str:
        return (self.test.__doc__ or "").strip()


def _edge(fn, reg: bool = False) -> Rule:
    return Rule(fn.__name__, "edge", fn, reg)


def _pair(fn, reg: bool = False, partners: Callable | None = None) -> Rule:
    return Rule(fn.__name__, "pair", fn, reg, partners)


# Phase 1: walked in this order to a fixed point (restarting at the top after each merge).
EDGE_RULES: tuple[Rule, ...] = (
    _pair(wgmma_together, reg=True),
    _edge(wgmma_registers, reg=True),
    _edge(pointer_load_to_consumer),
    _edge(load_to_local_alloc),
    _edge(view_chain),
    _edge(producer_to_iter_arg),
    _edge(token_iter_arg_to_user),
    _edge(token_if_result_to_producer),
    _edge(cheap_into_costly_sfu),
    _edge(plain_chain),
    _edge(plain_into_sfu),
    _edge(tmem_load_to_consumer),
    _edge(tmem_to_store),
    _edge(staging_to_producer),
    _edge(cheap_into_special_consumer),
    _edge(plain_into_costly_producer),
    _edge(plain_into_producer),
    _edge(store_store),
    _edge(plain_plain),
    _edge(large_edge),
    _edge(load_epilogue),
)

# Phase 2: pairwise partition rules, to a fixed point.
PAIR_RULES: tuple[Rule, ...] = (
    _pair(mma_mma),
    _pair(load_load),
    _pair(plain_store),
    _pair(shared_tmem_alloc, partners=lambda s, a: s.tmem_sharers(a)),
)

# Merges made after the rules: over the target's partition limit, over its register file, or
# over its memories (repair.py's merges; the name is repeated there, which rules.py cannot
# import).
CAP = "cap"
REGISTERS = "registers"
CAPACITY = "capacity"

RULE_NAMES: tuple[str, ...] = (
    *(r.name for r in EDGE_RULES),
    *(r.name for r in PAIR_RULES),
    CAP,
    REGISTERS,
    CAPACITY,
)


def rules_for(target, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules for `target` (wgmma rules only where MMAs accumulate in registers)."""
    return tuple(
        r for r in rules if not r.register_accumulator_only or target.mma_accumulator_in_registers
    )
