"""The measured mode's output check compares in chunks (bounded memory) and says what a
whole-tensor comparison says. Needs torch (the GPU machine has it; CPU torch will do)."""

import pytest

torch = pytest.importorskip("torch")

from ws_solver.triton.autotuning import launcher  # noqa: E402


def _whole(ref, out, limit: float) -> str | None:
    """The comparison on the whole tensors at once, in float64."""
    r, o = ref.double().reshape(-1), out.double().reshape(-1)
    if int((torch.isnan(r) != torch.isnan(o)).sum()):
        return "nan"
    keep = ~torch.isnan(r)
    r, o = r[keep], o[keep]
    inf = torch.isinf(r) | torch.isinf(o)
    if bool((r[inf] != o[inf]).any()):
        return "inf"
    r, o = r[~inf], o[~inf]
    return "error" if float((o - r).norm() / r.norm()) > limit else None


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_chunks_agree_with_the_whole(monkeypatch, dtype) -> None:
    monkeypatch.setattr(launcher, "CHUNK", 1000)
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(3001, 7, generator=g).to(dtype)
    cases = [ref.clone(), (ref.float() * 1.0005).to(dtype)]
    cases.append((ref.float() + 0.05 * torch.randn(ref.shape, generator=g)).to(dtype))
    nan, inf = ref.clone(), ref.clone()
    nan[2999, 6], inf[5, 0] = float("nan"), float("inf")
    cases += [nan, inf]
    limit = launcher.tolerance_for(dtype, None)
    words = {"nan": "NaN in one output only", "inf": "infinities differ", "error": "relative"}
    for out in cases:
        found = launcher.disagreement(ref, out)
        expected = _whole(ref, out, limit)
        assert (found is None) == (expected is None), (found, expected)
        if expected is not None:
            assert words[expected] in found
