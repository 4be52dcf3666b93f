"""Second-order gradients of composite ops against torch's autograd, in float64: for each op f,
the gradient of sum(f(x) * w) (w fixed random weights, so no symmetry cancels), then the
gradient of that gradient dotted with a random v: a Hessian-vector product, through every
operand that takes a gradient (mixed second derivatives included)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from polygrad import Tensor  # noqa: E402

RNG = np.random.default_rng(20261126)


def rand(*shape, positive=False):
    x = RNG.standard_normal(shape)
    return np.abs(x) + 0.5 if positive else x


def torch_attention(q, k, v, is_causal=False):
    """softmax(q k^T / sqrt(d)) v (torch 1.13 has no scaled_dot_product_attention)."""
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if is_causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return s.softmax(-1) @ v


# name, polygrad fn, torch fn, operand arrays (every one takes a gradient)
CASES = [
    ("softmax", lambda x: x.softmax(-1), lambda x: x.softmax(-1), [rand(3, 5)]),
    ("log_softmax", lambda x: x.log_softmax(-1), lambda x: x.log_softmax(-1), [rand(3, 5)]),
    ("softmax axis 0", lambda x: x.softmax(0), lambda x: x.softmax(0), [rand(4, 3)]),
    ("logsumexp", lambda x: x.logsumexp(-1), lambda x: x.logsumexp(-1), [rand(3, 6)]),
    ("layernorm", lambda x: x.layernorm(), lambda x: F.layer_norm(x, (6,)), [rand(4, 6)]),
    ("var", lambda x: x.var(1), lambda x: x.var(1), [rand(3, 5)]),
    ("std", lambda x: x.std(0), lambda x: x.std(0), [rand(4, 3)]),
    # (a linear or piecewise-linear op's gradient does not depend on x: squared, it does)
    ("mean", lambda x: x.mean(1) ** 2, lambda x: x.mean(1) ** 2, [rand(3, 4)]),
    ("max", lambda x: x.max(1) ** 2, lambda x: x.amax(1) ** 2, [rand(3, 5)]),
    ("min", lambda x: x.min(0).exp(), lambda x: x.amin(0).exp(), [rand(4, 3)]),
    ("cumsum", lambda x: x.cumsum(1) ** 2, lambda x: x.cumsum(1) ** 2, [rand(3, 5)]),
    ("matmul", lambda a, b: (a @ b).tanh(), lambda a, b: (a @ b).tanh(), [rand(3, 4), rand(4, 5)]),
    ("linear", lambda x, w, b: x.linear(w, b).sigmoid(),
     lambda x, w, b: F.linear(x, w, b).sigmoid(), [rand(3, 4), rand(5, 4), rand(5)]),
    ("einsum", lambda a, b: Tensor.einsum("ij,jk->ik", a, b) ** 2,
     lambda a, b: torch.einsum("ij,jk->ik", a, b) ** 2, [rand(2, 3), rand(3, 4)]),
    ("conv2d", lambda x, w: x.conv2d(w, padding=1).tanh(),
     lambda x, w: F.conv2d(x, w, padding=1).tanh(), [rand(2, 2, 5, 5), rand(3, 2, 3, 3)]),
    ("conv2d strided", lambda x, w: x.conv2d(w, stride=2).sin(),
     lambda x, w: F.conv2d(x, w, stride=2).sin(), [rand(1, 2, 7, 7), rand(2, 2, 3, 3)]),
    ("max_pool2d", lambda x: (x.max_pool2d() ** 2), lambda x: F.max_pool2d(x, 2) ** 2,
     [rand(1, 2, 4, 6)]),
    ("avg_pool2d", lambda x: (x.avg_pool2d() ** 3), lambda x: F.avg_pool2d(x, 2) ** 3,
     [rand(1, 2, 4, 6)]),
    ("gelu", lambda x: x.gelu(), lambda x: F.gelu(x, approximate="tanh"), [rand(3, 4)]),
    ("silu", lambda x: x.silu(), F.silu, [rand(3, 4)]),
    ("softplus", lambda x: x.softplus(), F.softplus, [rand(3, 4)]),
    ("sqrt log exp", lambda x: x.sqrt().log() * x.exp(), lambda x: x.sqrt().log() * x.exp(),
     [rand(3, 4, positive=True)]),
    ("pow", lambda a, b: a ** b, lambda a, b: a ** b,
     [rand(3, 4, positive=True), rand(3, 4)]),
    ("div", lambda a, b: a / b, lambda a, b: a / b, [rand(3, 4), rand(3, 4, positive=True)]),
    ("where", lambda a, b: (a > 0).where(a * b, b * b), lambda a, b: torch.where(a > 0, a * b, b * b),
     [rand(3, 4), rand(3, 4)]),
    ("movement", lambda x: x.permute(1, 0).flip(0).pad(((1, 0), (0, 2))).reshape(-1)[2:9] ** 3,
     lambda x: F.pad(x.permute(1, 0).flip(0), (0, 2, 1, 0)).reshape(-1)[2:9] ** 3,
     [rand(3, 4)]),
    ("expand", lambda x: x.reshape(3, 1).expand(3, 4).sin(),
     lambda x: x.reshape(3, 1).expand(3, 4).sin(), [rand(3)]),
    ("cat", lambda a, b: a.cat(b, dim=1).tanh(), lambda a, b: torch.cat([a, b], 1).tanh(),
     [rand(2, 3), rand(2, 2)]),
    ("gather", lambda x: x[Tensor(np.array([2, 0, 2, 1]), dtype="int32")].sin() * x.sum(0),
     lambda x: x[torch.tensor([2, 0, 2, 1])].sin() * x.sum(0), [rand(3, 4)]),
    ("bce with logits", lambda x: x.binary_crossentropy_logits(Tensor(np.array([1.0, 0.0, 1.0]))),
     lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor([1.0, 0.0, 1.0],
                                                                  dtype=torch.float64)),
     [rand(3)]),
    ("attention", lambda q, k, v: q.scaled_dot_product_attention(k, v),
     torch_attention, [rand(1, 2, 3, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4)]),
    ("causal attention", lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
     lambda q, k, v: torch_attention(q, k, v, is_causal=True),
     [rand(1, 1, 4, 3), rand(1, 1, 4, 3), rand(1, 1, 4, 3)]),
]


def hvp(fn, arrays, w, vs, lib):
    if lib == "pg":
        xs = [Tensor(a, requires_grad=True) for a in arrays]
        grads = (fn(*xs) * Tensor(w)).sum().gradient(*xs)
        dot = sum((g * Tensor(v)).sum() for g, v in zip(grads, vs))
        return [g.numpy() for g in grads], [h.numpy() for h in dot.gradient(*xs)]
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    grads = torch.autograd.grad((fn(*xs) * torch.tensor(w)).sum(), xs, create_graph=True)
    dot = sum((g * torch.tensor(v)).sum() for g, v in zip(grads, vs))
    return [g.detach().numpy() for g in grads], [h.numpy() for h in torch.autograd.grad(dot, xs)]


@pytest.mark.parametrize("name,pg_fn,torch_fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_hessian_vector_products_match_torch(name, pg_fn, torch_fn, arrays):
    out_shape = torch_fn(*[torch.tensor(a) for a in arrays]).shape
    w = RNG.standard_normal(tuple(out_shape))
    vs = [RNG.standard_normal(a.shape) for a in arrays]
    g, h = hvp(pg_fn, arrays, w, vs, "pg")
    tg, th = hvp(torch_fn, arrays, w, vs, "torch")
    for i in range(len(arrays)):
        np.testing.assert_allclose(g[i], tg[i], rtol=1e-9, atol=1e-11,
                                   err_msg=f"{name}: gradient of operand {i}")
        np.testing.assert_allclose(h[i], th[i], rtol=1e-8, atol=1e-10,
                                   err_msg=f"{name}: Hessian-vector product, operand {i}")


def test_cross_entropy_hessian_vector_product_matches_torch():
    """Class targets, with and without label smoothing, through the logits of a linear layer."""
    x, wt, y = rand(4, 3), rand(3, 5), np.array([1, 0, 4, 2])
    for smoothing in (0.0, 0.1):
        v = RNG.standard_normal(wt.shape)
        pw = Tensor(wt, requires_grad=True)
        (g,) = (Tensor(x) @ pw).cross_entropy(Tensor(y, dtype="int32"),
                                             label_smoothing=smoothing).gradient(pw)
        (h,) = (g * Tensor(v)).sum().gradient(pw)
        tw = torch.tensor(wt, requires_grad=True)
        loss = F.cross_entropy(torch.tensor(x) @ tw, torch.tensor(y), label_smoothing=smoothing)
        (tg,) = torch.autograd.grad(loss, tw, create_graph=True)
        (th,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tw)
        np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-8, atol=1e-11,
                                   err_msg=f"label_smoothing {smoothing}")
