"""The vendor-library reference each corpus kernel is measured against (cuBLAS, SDPA,
``torch._scaled_mm``), and the work one launch does (FLOP or bytes), for rates."""

from __future__ import annotations

from typing import Any

from benchmarks.common.bench_compile import first_error_line


def kernel_work(kernel: str, config: dict, inputs: dict) -> tuple[float, str]:
    """(operations or bytes, unit) of one launch: FLOP for matmul kernels, bytes otherwise."""
    if kernel.startswith("gemm"):
        a, c = inputs["a"], inputs["c"]
        return 2.0 * a.shape[0] * c.shape[1] * a.shape[1], "TFLOP/s"
    if kernel == "attention_fwd":
        z, h, n, d = inputs["q"].shape
        return 4.0 * z * h * n * n * d * (0.5 if inputs["causal"] else 1.0), "TFLOP/s"
    if kernel == "attention_bwd":
        z, h, n, d = inputs["q"].shape
        return 8.0 * z * h * n * n * d, "TFLOP/s"  # dK, dV: four N x N x D products
    if kernel == "row_reduce":
        x = inputs["x"]
        return float(x.numel() * x.element_size() + x.shape[0] * 4), "GB/s"
    raise KeyError(kernel)


def vendor(kernel: str, config: dict, inputs: dict) -> dict | None:
    """The vendor-library reference for the same problem: fn, its work, label, output."""
    import torch
    import torch.nn.functional as F

    if kernel in ("gemm_tma", "gemm_persistent"):
        a, b = inputs["a"], inputs["b"]
        return {"fn": lambda: a @ b.T, "label": "cuBLAS (torch.matmul fp16)"}
    if kernel == "gemm_pointer":
        a, b = inputs["a"], inputs["b"]
        return {"fn": lambda: a @ b, "label": "cuBLAS (torch.matmul fp16)"}
    if kernel in ("gemm_fp8", "gemm_cond_reset"):
        a, b = inputs["a"], inputs["b"]
        sa, sb = inputs["a_scale"], inputs["b_scale"]
        sa = (sa[:, :1] if sa.dim() == 2 else sa[:, None]).float().contiguous()
        sb = (sb[:, 0] if sb.dim() == 2 else sb)[None, :].float().contiguous()

        def fn():
            return torch._scaled_mm(a, b.T, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        label = "torch._scaled_mm fp8 row-wise"
        if kernel == "gemm_cond_reset":
            label += " (proxy: no per-K-group scales)"
        return {"fn": fn, "label": label}
    if kernel == "gemm_grouped":
        a, b, n = inputs["a"], inputs["b"], inputs["c"].shape[1]
        bounds, start = [], 0
        for g, count in enumerate(inputs["counts"]):
            bounds.append((a[start : start + count], b[g * n : (g + 1) * n]))
            start += count
        return {
            "fn": lambda: [x @ w.T for x, w in bounds],
            "label": "cuBLAS, one torch.matmul per group",
        }
    if kernel == "attention_fwd":
        q, k, v = inputs["q"], inputs["k"], inputs["v"]
        causal, scale = inputs["causal"], inputs["sm_scale"]

        def sdpa():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

        return {"fn": sdpa, "label": "torch SDPA", "alternatives": sdpa_backends(sdpa)}
    if kernel == "attention_bwd":
        q, k, v = (inputs[x].detach().requires_grad_() for x in ("q", "k", "v"))
        out = F.scaled_dot_product_attention(q, k, v, scale=inputs["sm_scale"])
        do = inputs["do"]
        z, h, n, d = q.shape
        return {
            "fn": lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True),
            "label": "torch SDPA backward (dQ, dK, dV; proxy)",
            "work": 10.0 * z * h * n * n * d,
        }
    if kernel == "row_reduce":
        x, eps = inputs["x"], inputs["eps"]
        return {
            "fn": lambda: torch.rsqrt(
                torch.linalg.vector_norm(x, dim=1, dtype=torch.float32) ** 2 / x.shape[1] + eps
            ),
            "label": "torch (vector_norm + rsqrt)",
        }
    return None


def sdpa_backends(sdpa: Any) -> dict[str, Any]:
    """SDPA pinned to each fused backend, to say which one the default picked and how the
    kernels compare with FlashAttention-2 (the flash backend) and cuDNN separately."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def pinned(backend: Any) -> Any:
        def fn() -> Any:
            with sdpa_kernel(backend):
                return sdpa()

        return fn

    return {
        "SDPA flash backend (FlashAttention-2)": pinned(SDPBackend.FLASH_ATTENTION),
        "SDPA cuDNN backend": pinned(SDPBackend.CUDNN_ATTENTION),
    }


def time_alternatives(ref: dict, work: float, scale: float) -> dict[str, dict]:
    """Rates of the reference's alternative implementations; an error names why one is missing."""
    from triton.testing import do_bench

    found = {}
    for label, fn in ref.get("alternatives", {}).items():
        try:
            fn()
            ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
            found[label] = {"ms": ms, "rate": ref.get("work", work) * scale / (ms * 1e-3)}
        except Exception as e:
            found[label] = {"error": first_error_line(e)}
    return found
