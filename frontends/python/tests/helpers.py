"""Shared helpers: run the same function on polygrad and torch tensors made from the same
random numpy inputs, and compare values and gradients."""
import numpy as np
import torch

from polygrad import Device, Tensor


def cpu_missing():
    """"" when the cpu device is loaded, else why the tests that need it skip: an
    installation without the cpu_clang plugin (a GPU machine's bundle, whose LLVM libraries
    are too big to carry) has none."""
    if any(d.startswith("cpu:") for d in Device.list()):
        return ""
    why = [line.strip() for line in Device.report().split("\n") if "cpu_clang" in line]
    return "no cpu device: " + ("; ".join(why) or "the cpu_clang plugin is not installed")


def inputs(shapes, low=-2.0, high=2.0, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(np.float32) for s in shapes]


def compare(fn, shapes, torch_fn=None, *, grad=True, low=-2.0, high=2.0, atol=1e-5, rtol=1e-4,
            seed=0, xs=None):
    """fn(*polygrad tensors) vs (torch_fn or fn)(*torch tensors): values, then the gradients of
    sum(out * u) for a random u with respect to every input."""
    xs = inputs(shapes, low, high, seed) if xs is None else xs
    pts = [Tensor(x, requires_grad=grad) for x in xs]
    tts = [torch.tensor(x, requires_grad=grad) for x in xs]
    po = fn(*pts)
    to = (torch_fn or fn)(*tts)
    if grad:
        u = np.random.default_rng(seed + 1).uniform(0.5, 1.5, tuple(to.shape)).astype(np.float32)
        (po * Tensor(u)).sum().backward()
        (to * torch.tensor(u)).sum().backward()
    pv = po.numpy()
    tv = to.detach().numpy()
    assert pv.shape == tv.shape, (pv.shape, tv.shape)
    np.testing.assert_allclose(pv, tv, atol=atol, rtol=rtol)
    if grad:
        for i, (p, t) in enumerate(zip(pts, tts)):
            tg = t.grad.numpy() if t.grad is not None else np.zeros_like(xs[i])
            pg = p.grad.numpy() if p.grad is not None else np.zeros_like(xs[i])
            np.testing.assert_allclose(pg, tg, atol=atol * 10, rtol=rtol * 10,
                                       err_msg=f"gradient of input {i}")
    return pv
