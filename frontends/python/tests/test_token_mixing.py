"""An MLP-Mixer block (token mixing through transposes, then channel mixing): values and
gradients against torch from the same weights. Its token-mixing weight gradients read the
upstream gradient through a transposed (batch, positions, channels) view, which the scheduler
copies contiguous before the matmul (docs/compiler.md)."""
import numpy as np
import torch

from polygrad import Tensor

B, P, C, HT, HC = 3, 8, 16, 24, 40


def block(x, w, lib):
    if lib == "torch":
        ln = lambda v: torch.nn.functional.layer_norm(v, (v.shape[-1],))
        gelu = lambda v: torch.nn.functional.gelu(v, approximate="tanh")
    else:
        ln = lambda v: v.layernorm()
        gelu = lambda v: v.gelu()
    y = ln(x).transpose(-1, -2)
    y = gelu(y @ w["t1"]) @ w["t2"]
    x = x + y.transpose(-1, -2)
    return x + gelu(ln(x) @ w["c1"]) @ w["c2"]


def test_mixer_block_values_and_gradients_match_torch():
    rng = np.random.default_rng(11)
    shapes = {"t1": (P, HT), "t2": (HT, P), "c1": (C, HC), "c2": (HC, C)}
    w = {k: rng.uniform(-0.3, 0.3, s).astype(np.float32) for k, s in shapes.items()}
    x = rng.uniform(-1, 1, (B, P, C)).astype(np.float32)
    u = rng.uniform(0.5, 1.5, (B, P, C)).astype(np.float32)
    pw = {k: Tensor(v, requires_grad=True) for k, v in w.items()}
    tw = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
    px = Tensor(x, requires_grad=True)
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    po, to = block(px, pw, "polygrad"), block(tx, tw, "torch")
    (po * Tensor(u)).sum().backward()
    (to * torch.tensor(u, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(po.numpy(), to.detach().numpy(), atol=2e-5, rtol=1e-4)
    np.testing.assert_allclose(px.grad.numpy(), tx.grad.numpy(), atol=2e-4, rtol=1e-3)
    for k in w:
        np.testing.assert_allclose(pw[k].grad.numpy(), tw[k].grad.numpy(), atol=2e-4, rtol=1e-3,
                                   err_msg=k)
