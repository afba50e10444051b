"""The exact partitioner: LoopGraph + Target -> CP-SAT model -> optimal Plan."""

from .build import STEPS, encode
from .solve import SolveResult, solve
from .variables import GROUPS, LIMIT_GROUPS, EncodeOptions, Encoding

__all__ = [
    "GROUPS",
    "LIMIT_GROUPS",
    "STEPS",
    "EncodeOptions",
    "Encoding",
    "SolveResult",
    "encode",
    "solve",
]
