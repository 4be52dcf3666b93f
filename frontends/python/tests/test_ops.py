"""Every method of the seed's tables: values and gradients against torch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import compare
import polygrad
from polygrad import Tensor

S = [(3, 4)]


@pytest.mark.parametrize("name", ["exp", "sin", "cos", "square", "abs", "sign", "tanh",
                                  "sigmoid", "relu", "ceil", "floor", "trunc", "neg"])
def test_unary_same_name(name):
    compare(lambda x: getattr(x, name)(), S, seed=3)


@pytest.mark.parametrize("name", ["log", "sqrt", "rsqrt", "reciprocal", "log2"])
def test_unary_positive(name):
    compare(lambda x: getattr(x, name)(), S, low=0.5, high=3.0)


def test_unary_other_names():
    compare(lambda x: x.exp2(), S, lambda x: torch.exp2(x))
    compare(lambda x: x.tan(), S, lambda x: torch.tan(x), low=-1.2, high=1.2)
    compare(lambda x: x.round(), S, lambda x: torch.round(x), grad=False)
    xs = [np.array([0.0, np.nan, np.inf, -np.inf, 1.0], np.float32)]
    np.testing.assert_array_equal(Tensor(xs[0]).isnan().numpy(), np.isnan(xs[0]))
    np.testing.assert_array_equal(Tensor(xs[0]).isinf().numpy(), np.isinf(xs[0]))


def test_activations():
    compare(lambda x: x.relu6(), S, F.relu6, low=-3, high=8)
    compare(lambda x: x.leaky_relu(), S, F.leaky_relu)
    compare(lambda x: x.leaky_relu(0.2), S, lambda x: F.leaky_relu(x, 0.2))
    compare(lambda x: x.leaky_relu(neg_slope=0.3), S, lambda x: F.leaky_relu(x, 0.3))
    compare(lambda x: x.elu(alpha=2.0), S, lambda x: F.elu(x, 2.0))
    compare(lambda x: x.softplus(beta=0.5), S, lambda x: F.softplus(x, 0.5))
    compare(lambda x: x.hardtanh(min_val=-0.2, max_val=0.4), S,
            lambda x: F.hardtanh(x, -0.2, 0.4))
    compare(lambda x: x.gelu(), S, lambda x: F.gelu(x, approximate="tanh"))
    compare(lambda x: x.quick_gelu(), S, lambda x: x * torch.sigmoid(1.702 * x))
    compare(lambda x: x.silu(), S, F.silu)
    compare(lambda x: x.swish(), S, F.silu)
    compare(lambda x: x.elu(), S, F.elu)
    compare(lambda x: x.elu(0.5), S, lambda x: F.elu(x, 0.5))
    compare(lambda x: x.softplus(), S, F.softplus)
    compare(lambda x: x.softplus(2.0), S, lambda x: F.softplus(x, 2.0))
    compare(lambda x: x.mish(), S, F.mish)
    compare(lambda x: x.hardtanh(), S, F.hardtanh)
    compare(lambda x: x.hardtanh(-0.5, 1.5), S, lambda x: F.hardtanh(x, -0.5, 1.5))
    compare(lambda x: x.hardswish(), S, F.hardswish, low=-4, high=4)
    compare(lambda x: x.hardsigmoid(), S, F.hardsigmoid, low=-4, high=4)


def test_arithmetic_broadcast_and_scalars():
    two = [(3, 4), (4,)]
    compare(lambda a, b: a + b, two)
    compare(lambda a, b: a - b, two)
    compare(lambda a, b: a * b, two)
    compare(lambda a, b: a / b, [(3, 4), (3, 1)], low=0.5, high=2)
    compare(lambda a, b: a ** b, [(3, 4), (3, 4)], low=0.5, high=2)
    compare(lambda a: -a, S)
    compare(lambda a: a + 2, S)
    compare(lambda a: 2 + a, S)
    compare(lambda a: a - 1.5, S)
    compare(lambda a: 1.5 - a, S)
    compare(lambda a: a * 3, S)
    compare(lambda a: 3 * a, S)
    compare(lambda a: a / 4, S)
    compare(lambda a: 4 / a, S, low=0.5, high=2)
    compare(lambda a: a ** 2, S)
    compare(lambda a: a ** 0.5, S, low=0.5, high=2)
    compare(lambda a: 2 ** a, S)
    assert (Tensor([1, 2]) + 1).dtype == "int32"
    assert (Tensor([1, 2]) * 0.5).dtype == "float32"
    np.testing.assert_allclose((1 - Tensor([1, 2])).numpy(), [0, -1])


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_comparisons_are_float(op):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32)
    b = np.array([2.0, 2.0, 2.0], np.float32)
    f = eval(f"lambda x, y: x {op} y")
    out = f(Tensor(a), Tensor(b))
    assert out.dtype == "float32"
    np.testing.assert_array_equal(out.numpy(), f(a, b).astype(np.float32))
    np.testing.assert_array_equal(f(Tensor(a), 2.0).numpy(), f(a, 2.0).astype(np.float32))
    np.testing.assert_array_equal(f(2.0, Tensor(a)).numpy(), f(2.0, a).astype(np.float32))


def test_where_maximum_minimum_clamp():
    c = np.array([[1, 0, 1, 0]] * 3, np.float32)
    compare(lambda x, y: Tensor(c).where(x, y), [(3, 4), (3, 4)],
            lambda x, y: torch.where(torch.tensor(c) > 0, x, y))
    compare(lambda x: Tensor(c).where(x, 0.5), S,
            lambda x: torch.where(torch.tensor(c) > 0, x, torch.tensor(0.5)))
    compare(lambda x, y: x.maximum(y), [(3, 4), (3, 4)], torch.maximum)
    compare(lambda x, y: x.minimum(y), [(3, 4), (4,)], torch.minimum)
    compare(lambda x: x.maximum(0.3), S, lambda x: torch.clamp(x, min=0.3))
    compare(lambda x: x.clamp(-0.5, 0.7), S, lambda x: torch.clamp(x, -0.5, 0.7))
    compare(lambda x: x.clamp(min_=-0.5), S, lambda x: torch.clamp(x, min=-0.5))
    compare(lambda x: x.clamp(max_=0.5), S, lambda x: torch.clamp(x, max=0.5))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_reductions(name):
    s = [(2, 3, 4)]

    def tfn(axis, keepdim):
        def f(x):
            if axis is None:
                r = getattr(x, name)()
                return r
            if name in ("max", "min"):
                r = x
                for a in sorted([axis] if isinstance(axis, int) else axis, reverse=True):
                    r = getattr(r, "amax" if name == "max" else "amin")(a, keepdim=keepdim)
                return r
            return getattr(x, name)(axis, keepdim=keepdim)
        return f
    for axis, keepdim in [(None, False), (1, False), (-1, True), ((0, 2), False), ((0, 1), True)]:
        compare(lambda x: getattr(x, name)(axis, keepdim), s, tfn(axis, keepdim))
    compare(lambda x: getattr(x, name)(axis=1, keepdim=True), s, tfn(1, True))


def test_var_std():
    s = [(3, 5)]
    compare(lambda x: x.var(), s, lambda x: x.var())
    compare(lambda x: x.var(1), s, lambda x: x.var(1))
    compare(lambda x: x.var(0, keepdim=True, correction=0), s,
            lambda x: x.var(0, keepdim=True, unbiased=False))
    compare(lambda x: x.std(), s, lambda x: x.std())
    compare(lambda x: x.std(-1, keepdim=True), s, lambda x: x.std(-1, keepdim=True))
    compare(lambda x: x.std(axis=(0, 1), correction=0), s, lambda x: x.std((0, 1),
                                                                              unbiased=False))
    # A row of equal values: std 0, and torch's gradient there is 0, not NaN.
    xs = [np.array([[1.5, 1.5, 1.5], [0.0, 1.0, 3.0]], dtype=np.float32)]
    compare(lambda x: x.std(1), None, lambda x: x.std(1), xs=xs)


def test_prod_logsumexp_cumsum_argmax():
    compare(lambda x: x.prod(1), [(3, 4)], lambda x: x.prod(1), low=0.5, high=1.5)
    compare(lambda x: x.logsumexp(1), [(3, 4)], lambda x: x.logsumexp(1))
    compare(lambda x: x.cumsum(1), [(3, 4)], lambda x: x.cumsum(1))
    compare(lambda x: x.cumsum(), [(5,)], lambda x: x.cumsum(0))
    # Long axes run in blocks of 256 (a padded last block; 547 block totals in blocks again).
    compare(lambda x: x.cumsum(1), [(3, 1000)], lambda x: x.cumsum(1), atol=1e-4)
    compare(lambda x: x.cumsum(0), [(140000, 1)], lambda x: x.cumsum(0), atol=2e-3, grad=False)
    compare(lambda x: x.cumsum(0), [(513, 2)], lambda x: x.cumsum(0), atol=1e-4)
    xi = np.random.default_rng(1).integers(-9, 9, size=(2, 5000)).astype(np.int32)
    np.testing.assert_array_equal(Tensor(xi).cumsum(1).numpy(), np.cumsum(xi, 1))
    x = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    np.testing.assert_array_equal(Tensor(x).argmax(1).numpy(), x.argmax(1))
    np.testing.assert_array_equal(Tensor(x).argmax().numpy(), x.argmax())
    np.testing.assert_array_equal(Tensor(x).argmin(0).numpy(), x.argmin(0))
    assert Tensor(x).argmax(1, keepdim=True).shape == (3, 1)


def test_movement():
    s = [(2, 3, 4)]
    compare(lambda x: x.reshape(6, 4), s)
    compare(lambda x: x.reshape((4, -1)), s, lambda x: x.reshape(4, -1))
    compare(lambda x: x.view(-1), s)
    compare(lambda x: x.permute(2, 0, 1), s)
    compare(lambda x: x.permute((1, 2, 0)), s, lambda x: x.permute(1, 2, 0))
    compare(lambda x: x.transpose(), s, lambda x: x.transpose(-2, -1))
    compare(lambda x: x.transpose(0, 2), s)
    compare(lambda x: x.expand(5, 3, 4), [(1, 3, 4)])
    compare(lambda x: x.expand(2, -1, 4), [(2, 3, 1)], lambda x: x.expand(2, 3, 4))
    compare(lambda x: x.squeeze(), [(1, 3, 1)])
    compare(lambda x: x.squeeze(0), [(1, 3, 1)])
    compare(lambda x: x.unsqueeze(1), s)
    compare(lambda x: x.unsqueeze(-1), s)
    compare(lambda x: x.flatten(), s)
    compare(lambda x: x.flatten(1), s)
    compare(lambda x: x.flatten(0, 1), s)
    compare(lambda x: x.unflatten(2, (2, 2)), s)
    compare(lambda x: x.shrink(((0, 1), None, (1, 3))), s, lambda x: x[0:1, :, 1:3])
    compare(lambda x: x.pad(((0, 0), (1, 2), (2, 0))), s,
            lambda x: F.pad(x, (2, 0, 1, 2)))
    compare(lambda x: x.pad((1, 1)), s, lambda x: F.pad(x, (1, 1)))
    compare(lambda x: x.pad((1, 1), value=2.5), s, lambda x: F.pad(x, (1, 1), value=2.5))
    compare(lambda x: x.flip(0), s, lambda x: x.flip(0))
    compare(lambda x: x.flip((0, 2)), s, lambda x: x.flip((0, 2)))
    compare(lambda x: x.repeat(2, 1, 3), s)
    compare(lambda x: x.T, [(3, 4)], lambda x: x.T)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes(mode):
    # torch pads the last axis of a 3-d tensor in these modes and the last two of a 4-d one;
    # circular also crops.
    cases = [((1, 2), (2, 3, 5)), ((2, 0, 1, 3), (1, 2, 4, 5)), ((3, 1, 0, 2), (1, 2, 4, 5))]
    if mode == "circular":
        cases.append(((-1, 2, 2, -1), (1, 2, 4, 5)))
    for flat, shape in cases:
        compare(lambda x: x.pad(flat, mode=mode), [shape], lambda x: F.pad(x, flat, mode=mode))
    compare(lambda x: x.pad(((0, 0), (0, 0), (1, 1), (2, 2)), mode), [(1, 2, 4, 5)],
            lambda x: F.pad(x, (2, 2, 1, 1), mode=mode))


def test_pad_mode_errors():
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="'wrap' is not one of"):
        x.pad((1, 1), mode="wrap")
    with pytest.raises(ValueError, match="takes no value"):
        x.pad((1, 1), mode="reflect", value=1.0)
    with pytest.raises(ValueError, match="reflect"):
        x.pad((3, 3), mode="reflect")


def test_getitem():
    s = [(4, 5, 6)]
    for idx in [1, -1, (0, 2), slice(1, 3), (slice(None), 2), (slice(None, None, 2),),
                (Ellipsis, 1), (None, 0), (1, None, slice(1, 4)),
                (slice(-3, None), Ellipsis, slice(None, None, 3)), (0, 1, 2),
                (slice(1, None, 2), -2, slice(None, -1))]:
        compare(lambda x: x[idx], s)
    # torch has no negative steps: flip
    compare(lambda x: x[::-1], s, lambda x: x.flip(0))
    compare(lambda x: x[:, ::-2, 1], s, lambda x: x.flip(1)[:, ::2, 1])
    compare(lambda x: x[-1, 3:0:-1], s, lambda x: x[-1].flip(0)[1:4])


def test_int_index_out_of_range_is_an_index_error():
    """As numpy's and torch's: an IndexError (it was a ValueError only), still a
    PolygradValueError; slicing past the end stays empty, not an error."""
    t = Tensor.ones(2, 3)
    for idx in [5, -3, (0, 3), (Ellipsis, -4)]:
        with pytest.raises(IndexError, match="out of range"):
            t[idx]
        with pytest.raises(polygrad.PolygradValueError):
            t[idx]
    with pytest.raises(IndexError):
        torch.ones(2, 3)[5]
    assert t[5:].shape == (0, 3)


def test_tensor_index_and_gather():
    x = [np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)]
    idx = np.array([[4, 0], [1, 1]])
    compare(lambda w: w[Tensor(idx, dtype="int32")], None, lambda w: w[torch.tensor(idx)], xs=x)
    g = np.array([[0, 2, 1], [4, 4, 0]])
    compare(lambda w: w.gather(0, Tensor(g, dtype="int32")), None,
            lambda w: w.gather(0, torch.tensor(g)), xs=x)
    g1 = np.array([[2, 0], [1, 1], [0, 0], [2, 2], [1, 0]])
    compare(lambda w: w.gather(1, Tensor(g1, dtype="int32")), None,
            lambda w: w.gather(1, torch.tensor(g1)), xs=x)


def test_negative_indices_wrap_and_list_indices_are_bounds_checked():
    x = [np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)]
    for idx in ([2, 0, -1], [[-5, 4], [-2, 1]], np.array([-1, 3])):
        compare(lambda w: w[idx], None, lambda w: w[torch.tensor(idx)], xs=x)
    for dt in ("int32", "int64"):
        t = np.array([[-1, 0], [-5, 2]])
        compare(lambda w: w[Tensor(t, dtype=dt)], None, lambda w: w[torch.tensor(t)], xs=x)
    for bad in ([0, 5], [-6], [[1], [7]]):
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 5"):
            Tensor(x[0])[bad]
        with pytest.raises(IndexError):
            torch.tensor(x[0])[bad]


def test_zero_slice_step_raises():
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        Tensor(np.zeros((2, 3), np.float32))[::0]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        Tensor(np.zeros((2, 3), np.float32))[:, 1::0]


def test_linear_algebra():
    compare(lambda a, b: a @ b, [(3, 4), (4, 5)])
    compare(lambda a, b: a.matmul(b), [(2, 3, 4), (4, 5)])
    compare(lambda a, b: a.dot(b), [(3, 4), (4, 2)], lambda a, b: a @ b)
    compare(lambda a, b: a @ b, [(4,), (4,)])
    compare(lambda a, b: a @ b, [(2, 3, 4), (2, 4, 5)])
    compare(lambda x, w, b: x.linear(w, b), [(3, 4), (5, 4), (5,)], F.linear)
    compare(lambda x, w: x.linear(w), [(3, 4), (5, 4)], F.linear)


def test_normalization_and_losses():
    compare(lambda x: x.softmax(), [(3, 5)], lambda x: x.softmax(-1))
    compare(lambda x: x.softmax(0), [(3, 5)], lambda x: x.softmax(0))
    compare(lambda x: x.log_softmax(), [(3, 5)], lambda x: x.log_softmax(-1))
    compare(lambda x: x.log_softmax(axis=0), [(3, 5)], lambda x: x.log_softmax(0))
    compare(lambda x: x.layernorm(), [(3, 5)], lambda x: F.layer_norm(x, (5,)), atol=1e-4)
    compare(lambda x: x.layernorm(eps=1e-3), [(3, 5)],
            lambda x: F.layer_norm(x, (5,), eps=1e-3), atol=1e-4)
    y = np.array([1, 0, 4])
    compare(lambda x: x.cross_entropy(Tensor(y, dtype="int32")), [(3, 5)],
            lambda x: F.cross_entropy(x, torch.tensor(y)))
    p = np.random.default_rng(5).dirichlet(np.ones(5), 3).astype(np.float32)
    compare(lambda x: x.cross_entropy(Tensor(p)), [(3, 5)],
            lambda x: F.cross_entropy(x, torch.tensor(p)))
    t = np.array([[1, 0, 1, 0]] * 3, np.float32)
    compare(lambda x: x.binary_crossentropy(Tensor(t)), [(3, 4)],
            lambda x: F.binary_cross_entropy(x, torch.tensor(t)), low=0.05, high=0.95)
    compare(lambda x: x.binary_crossentropy_logits(Tensor(t)), [(3, 4)],
            lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(t)))


def test_einsum_rearrange():
    compare(lambda a, b: Tensor.einsum("ij,jk->ik", a, b), [(3, 4), (4, 5)],
            lambda a, b: torch.einsum("ij,jk->ik", a, b))
    compare(lambda a, b: Tensor.einsum("bij,bjk->bik", [a, b]), [(2, 3, 4), (2, 4, 5)],
            lambda a, b: torch.einsum("bij,bjk->bik", a, b))
    compare(lambda a: Tensor.einsum("ij->ji", a), [(3, 4)], lambda a: a.T)
    compare(lambda a: Tensor.einsum("ij->", a), [(3, 3)], lambda a: a.sum())
    # repeated subscripts (diagonals, traces) and ellipses, values and gradients
    for f, shapes in [("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("bii,ij->bj", [(2, 3, 3), (3, 5)]),
                      ("...ij,jk->...ik", [(2, 3, 4), (4, 5)]), ("...ij->...ji", [(2, 3, 4)]),
                      ("i...,i...->...", [(3, 2, 4), (3, 1, 4)]), ("iji->j", [(3, 2, 3)])]:
        compare(lambda *xs, f=f: Tensor.einsum(f, *xs), shapes,
                lambda *xs, f=f: torch.einsum(f, *xs))
    compare(lambda x: x.rearrange("b h w -> b w h"), [(2, 3, 4)], lambda x: x.permute(0, 2, 1))
    compare(lambda x: x.rearrange("b (h w) -> b h w", h=2), [(2, 6)],
            lambda x: x.reshape(2, 2, 3))
    compare(lambda x: x.rearrange("b h w -> b (w h)"), [(2, 3, 4)],
            lambda x: x.permute(0, 2, 1).reshape(2, 12))
    # anonymous unit axes ("1", "()") and ellipses, as in einops
    compare(lambda x: x.rearrange("b h w -> b 1 h w ()"), [(2, 3, 4)],
            lambda x: x.reshape(2, 1, 3, 4, 1))
    compare(lambda x: x.rearrange("b 1 w -> b w"), [(2, 1, 4)], lambda x: x.reshape(2, 4))
    compare(lambda x: x.rearrange("b ... -> b (...)"), [(2, 3, 4, 5)], lambda x: x.reshape(2, 60))
    compare(lambda x: x.rearrange("b ... c -> c b ..."), [(2, 3, 4, 5)],
            lambda x: x.permute(3, 0, 1, 2))
    compare(lambda x: x.rearrange("b h ... -> (b h) ..."), [(2, 3, 4)], lambda x: x.reshape(6, 4))
    compare(lambda x: x.rearrange("b h w ... -> w b h ..."), [(2, 3, 4)],
            lambda x: x.permute(2, 0, 1))


def test_einsum_keeps_small_int_dtypes():
    # torch's contraction of int8 (uint8, int16) operands is int8 (wrapping), as matmul's; the
    # sum's 32-bit accumulator does not show.
    rng = np.random.default_rng(0)
    for dt in (np.int8, np.uint8, np.int16):
        a = rng.integers(0, 12, (3, 4)).astype(dt)
        b = rng.integers(0, 12, (4, 5)).astype(dt)
        for f, ops in [("ij,jk->ik", (a, b)), ("ij,ij->", (a, a)), ("ij,jk", (a, b))]:
            got = Tensor.einsum(f, *[Tensor(x) for x in ops]).numpy()
            want = torch.einsum(f, *[torch.tensor(x) for x in ops]).numpy()
            assert got.dtype == want.dtype, (f, dt, got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want)


def test_cat_stack_split_chunk():
    compare(lambda a, b: Tensor.cat(a, b), [(2, 3), (4, 3)], lambda a, b: torch.cat([a, b]))
    compare(lambda a, b: Tensor.cat(a, b, dim=1), [(2, 3), (2, 1)],
            lambda a, b: torch.cat([a, b], 1))
    compare(lambda a, b: a.cat(b, dim=-1), [(2, 3), (2, 2)], lambda a, b: torch.cat([a, b], -1))
    compare(lambda a, b: Tensor.stack(a, b), [(2, 3), (2, 3)], lambda a, b: torch.stack([a, b]))
    compare(lambda a, b: Tensor.stack(a, b, dim=2), [(2, 3), (2, 3)],
            lambda a, b: torch.stack([a, b], 2))
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    for ours, theirs in [(Tensor(x).split(3), torch.tensor(x).split(3)),
                         (Tensor(x).split([2, 5]), torch.tensor(x).split([2, 5])),
                         (Tensor(x).chunk(3), torch.tensor(x).chunk(3)),
                         (Tensor(x).split(1, dim=1), torch.tensor(x).split(1, dim=1)),
                         (Tensor(x).chunk(2, dim=1), torch.tensor(x).chunk(2, dim=1))]:
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    compare(lambda a: a.split([2, 5])[1] * 2, [(7, 2)], lambda a: a.split([2, 5])[1] * 2)
    compare(lambda a: a.chunk(3, 0)[2], [(7, 2)], lambda a: a.chunk(3, 0)[2])


def _sdpa(q, k, v, causal=False):
    """torch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(d)) v."""
    s = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    if causal:
        n, m = s.shape[-2:]
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).tril().logical_not(), -np.inf)
    return s.softmax(-1) @ v


def test_conv_pool_attention():
    compare(lambda x, w, b: x.conv2d(w, b), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], F.conv2d,
            atol=1e-4)
    compare(lambda x, w: x.conv2d(w, stride=2, padding=1), [(1, 2, 7, 7), (3, 2, 3, 3)],
            lambda x, w: F.conv2d(x, w, stride=2, padding=1), atol=1e-4)
    compare(lambda x, w: x.conv2d(w, groups=2, dilation=2), [(1, 4, 8, 8), (4, 2, 3, 3)],
            lambda x, w: F.conv2d(x, w, groups=2, dilation=2), atol=1e-4)
    # 8 x 8 outputs (a multiple of 16 positions: w @ cols, the positions as the matmul's
    # columns) and 5 x 5 (cols^T @ w^T); strided and dilated windows.
    compare(lambda x, w, b: x.conv2d(w, b, padding=1), [(3, 5, 8, 8), (6, 5, 3, 3), (6,)],
            lambda x, w, b: F.conv2d(x, w, b, padding=1), atol=1e-4)
    compare(lambda x, w: x.conv2d(w, stride=(2, 3), dilation=(2, 1)), [(2, 3, 14, 17), (4, 3, 3, 2)],
            lambda x, w: F.conv2d(x, w, stride=(2, 3), dilation=(2, 1)), atol=1e-4)
    compare(lambda x: x.max_pool2d(), [(1, 2, 6, 6)], lambda x: F.max_pool2d(x, 2))
    compare(lambda x: x.max_pool2d(3, stride=2, padding=1), [(1, 2, 7, 7)],
            lambda x: F.max_pool2d(x, 3, 2, 1))
    compare(lambda x: x.avg_pool2d(), [(1, 2, 6, 6)], lambda x: F.avg_pool2d(x, 2))
    compare(lambda x: x.avg_pool2d(3, stride=1, padding=1), [(1, 2, 5, 5)],
            lambda x: F.avg_pool2d(x, 3, 1, 1))
    # Windows that tile the input (stride = kernel): a reduce over tiles, cropped and padded.
    compare(lambda x: x.max_pool2d((2, 3)), [(2, 3, 7, 8)], lambda x: F.max_pool2d(x, (2, 3)))
    compare(lambda x: x.max_pool2d(2, padding=1), [(1, 2, 7, 7)],
            lambda x: F.max_pool2d(x, 2, padding=1))
    compare(lambda x: x.avg_pool2d(3, padding=1), [(1, 2, 7, 8)],
            lambda x: F.avg_pool2d(x, 3, padding=1))
    compare(lambda q, k, v: q.scaled_dot_product_attention(k, v), [(2, 3, 4), (2, 5, 4),
                                                                   (2, 5, 6)],
            _sdpa, atol=1e-4)
    compare(lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
            [(2, 4, 4), (2, 4, 4), (2, 4, 3)],
            lambda q, k, v: _sdpa(q, k, v, True), atol=1e-4)


def test_composite_graph_gradients():
    compare(lambda a, b: ((a @ b).relu().softmax() * 3).sum(1).sqrt(), [(3, 4), (4, 5)],
            lambda a, b: ((a @ b).relu().softmax(-1) * 3).sum(1).sqrt(), low=0.1, high=1.0)
    compare(lambda x: (x * x).sum(), [(3,)])


def test_gradients_at_zeros_bounds_and_saturation():
    # Values and gradients where a naive composition gives NaN (0 * inf) or a tie's 1/2:
    # torch's on zeros of powers, saturated sigmoids, softplus at 0 and the bounds of clamp,
    # hardtanh and relu6.
    edge = [np.array([[0.0, -1.0, 2.0, 0.5, -100.0, 100.0, 6.0, 1.0]], dtype=np.float32)]
    compare(lambda x: x ** 2.0, None, lambda x: x ** 2.0, xs=edge)
    compare(lambda x: x ** 3, None, lambda x: x ** 3, xs=edge)
    compare(lambda x: x ** -2, None, lambda x: x ** -2, xs=[edge[0][:, 1:4]])
    compare(lambda x: x.sigmoid(), None, lambda x: x.sigmoid(), xs=edge)
    compare(lambda x: x.tanh(), None, lambda x: x.tanh(), xs=edge)
    compare(lambda x: x.silu(), None, F.silu, xs=edge)
    compare(lambda x: x.softplus(), None, F.softplus, xs=[edge[0][:, :4]])
    compare(lambda x: x.clamp(0.0, 1.0), None, lambda x: x.clamp(0.0, 1.0), xs=edge)
    compare(lambda x: x.hardtanh(-1.0, 1.0), None, F.hardtanh, xs=edge)
    compare(lambda x: x.relu6(), None, F.relu6, xs=edge)
    # A tensor exponent at a zero base: 0, not NaN.
    base = np.array([[0.0, 1.5, 2.0]], dtype=np.float32)
    p = Tensor(base, requires_grad=True)
    (p ** Tensor(np.array([[2.5, 2.5, 2.5]], dtype=np.float32))).sum().backward()
    t = torch.tensor(base, requires_grad=True)
    (t ** torch.tensor([[2.5, 2.5, 2.5]])).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5)


def test_hardswish_hardsigmoid_gradients_on_their_bounds():
    # Values as torch. Gradients by hand: hardswish takes the middle piece's gradient,
    # x / 3 + 1/2, at x = -3 and 3 (-1/2 and 3/2), and 1 at NaN, as torch 1.13 does (torch 2
    # takes the outer pieces' 0 and 1 there); hardsigmoid's is 0 at the bounds and at NaN.
    x = np.array([[-3.0, 3.0, -3.5, 3.5, 0.0, -1.0, 2.0, np.nan]], dtype=np.float32)
    middle = np.abs(np.nan_to_num(x, nan=9.0)) <= 3
    cases = [(lambda t: t.hardswish(), F.hardswish, np.where(middle, x / 3 + 0.5, x > 0), 1.0),
             (lambda t: t.hardsigmoid(), F.hardsigmoid, np.where(np.abs(x) < 3, 1 / 6, 0), 0.0)]
    for fn, torch_fn, want, at_nan in cases:
        compare(fn, None, torch_fn, xs=[x], grad=False)
        p = Tensor(x, requires_grad=True)
        fn(p).sum().backward()
        want = np.where(np.isnan(x), at_nan, want)
        np.testing.assert_allclose(p.grad.numpy(), want.astype(np.float32), rtol=1e-6)


def test_softplus_gradient_at_its_threshold():
    # At beta x = 20 exactly torch's gradient is e^20 / (1 + e^20), not a tie's 1/2; logsigmoid
    # (at -20) and mish (at 20) go through softplus.
    x = [np.array([[19.5, 20.0, 20.5, 10.0, -20.0, 0.0]], dtype=np.float64)]
    compare(lambda x: x.softplus(), None, F.softplus, xs=x)
    compare(lambda x: x.softplus(2.0), None, lambda x: F.softplus(x, 2.0), xs=x)
    compare(lambda x: x.logsigmoid(), None, F.logsigmoid, xs=[-x[0]])
    compare(lambda x: x.mish(), None, F.mish, xs=x)


def test_clamp_keeps_integer_dtypes_for_whole_bounds():
    x = np.array([1, 5, -3], dtype=np.int32)
    got = Tensor(x).clamp(0, 4).numpy()
    want = torch.tensor(x).clamp(0, 4).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(Tensor(x).relu6().numpy(), F.relu6(torch.tensor(x)).numpy())


def test_clamp_with_tensor_bounds():
    lo, hi = [np.array([-0.5, 0.0, 0.5, 1.0], np.float32), np.full((3, 1), 0.25, np.float32)]
    compare(lambda x: x.clamp(Tensor(lo)), S, lambda x: x.clamp(torch.tensor(lo)))
    compare(lambda x: x.clamp(max=Tensor(hi)), S, lambda x: x.clamp(max=torch.tensor(hi)))
    compare(lambda x: x.clamp(Tensor(lo), 0.7), S,  # (torch takes two tensors here)
            lambda x: x.clamp(torch.tensor(lo), torch.tensor(0.7)))
    compare(lambda x, a, b: x.clamp(a, b), [(3, 4), (4,), (3, 1)], torch.clamp)  # hi < lo too


def test_max_of_a_reduce_sends_its_gradient_to_the_max():
    # The backward kernel recomputing sum(0) may add in another order than the forward's max
    # kernel did; the max's gradient must still reach the column holding it (it reached none).
    a = np.random.default_rng(0).uniform(-2, 2, (32, 8)).astype(np.float32)
    compare(lambda x: x.sum(0).max(), None, lambda x: x.sum(0).max(), xs=[a])
    compare(lambda x: x.var(0).max(), None, lambda x: x.var(0).max(), xs=[a])
    compare(lambda x: (x @ x.T).min(1), None, lambda x: (x @ x.T).min(1).values, xs=[a[:8]],
            atol=1e-4)


def test_realize_all_keeps_a_root_that_other_kernels_read():
    # v4 is a root and also read by the gradient kernels of the same schedule: the memory
    # planner must not hand its buffer to a later intermediate.
    rng = np.random.default_rng(0)
    a0 = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    a1 = rng.uniform(-2, 2, (1,)).astype(np.float32)
    u4 = rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    v0, v1 = Tensor(a0, requires_grad=True), Tensor(a1, requires_grad=True)
    v2 = v1.expand(3)
    v4 = (v2 > v0 + 0.0137).where(v2, v0 * 0.5).contiguous()
    v5 = v4.sum()
    (v5 * 1.3 + (v4 * Tensor(u4)).sum()).backward()
    Tensor.realize_all(v5, v4, v0.grad, v1.grad)
    want = np.where(a1 > a0 + 0.0137, np.broadcast_to(a1, (2, 3)), a0 * 0.5)
    np.testing.assert_allclose(v4.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(v5.numpy(), want.sum(), rtol=1e-5)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32"])
def test_a_tensor_padded_by_a_constant_keeps_its_value(dt):
    # A 16-bit tensor padded and stored moves as bits, its padding among them (an exactly
    # representable value as literal bits, others converted); -0.0 stays -0.0. Each against
    # torch's, bit for bit.
    vals = np.array([-1.0, 2.5, -0.0, 3.0, -7.0, 0.5, -2.0, 1.0], np.float32)
    x, t = Tensor(vals).cast(dt).realize(), torch.tensor(vals).to(getattr(torch, dt))
    for c in [1.5, -2.0, 0.0, -0.0, 0.1, 65504.0, 2.0 ** -14, 2.0 ** -20, 3.0e38]:
        got = x.pad(((1, 2),), value=c).realize().cast("float32").numpy()
        fill = torch.tensor([c], dtype=torch.float32).to(t.dtype)  # (3e38: inf in float16)
        want = torch.cat([fill, t, fill, fill]).float().numpy()
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=str(c))
