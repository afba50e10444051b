"""The lowering guard: Triton's lowering of an annotated module tried first in a helper
process (`client` in the compiling process, `server` in the helper)."""
