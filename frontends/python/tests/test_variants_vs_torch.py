"""Argument variants and non-contiguous inputs (permuted, stepped, flipped, padded, expanded,
shrunk views) of the Tensor ops, against torch: values and gradients. Where the seed
(tinygrad) and torch differ, the seed's behaviour is tested and the test says so."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from polygrad import PolygradValueError, Tensor


def _run(fn, shapes, *, xs=None, grad=True, atol=1e-5, rtol=1e-5, seed=0):
    """fn(is_torch, *tensors) on polygrad and torch tensors made from the same random inputs:
    the outputs (a tensor or a list), then the gradients of sum(out * u) for random u."""
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes] if xs is None else xs
    pts = [Tensor(x, requires_grad=grad) for x in xs]
    tts = [torch.tensor(x, requires_grad=grad) for x in xs]
    po, to = fn(False, *pts), fn(True, *tts)
    po, to = (list(po), list(to)) if isinstance(to, (list, tuple)) else ([po], [to])
    assert len(po) == len(to)
    lp, lt = 0, 0
    for p, t in zip(po, to):
        assert p.shape == tuple(t.shape), (p.shape, tuple(t.shape))
        np.testing.assert_allclose(p.numpy(), t.detach().numpy(), atol=atol, rtol=rtol)
        if grad and t.dtype.is_floating_point:
            u = rng.uniform(0.5, 1.5, tuple(t.shape)).astype(np.float32)
            lp, lt = lp + (p * Tensor(u)).sum(), lt + (t * torch.tensor(u)).sum()
    if grad:
        lp.backward()
        lt.backward()
        for i, (p, t) in enumerate(zip(pts, tts)):
            tg = np.zeros_like(xs[i]) if t.grad is None else t.grad.numpy()
            pg = np.zeros_like(xs[i]) if p.grad is None else p.grad.numpy()
            np.testing.assert_allclose(pg, tg, atol=10 * atol, rtol=10 * rtol,
                                       err_msg=f"gradient of input {i}")


def _pad(T, t, pairs, value=0.0):
    if T:
        return F.pad(t, [v for p in reversed(pairs) for v in p], value=value)
    return t.pad(pairs, value=value)


# A view of a base tensor with the shape S: (the base's shape, the view). Torch has no negative
# steps: its side flips and steps forward.
VIEWS = {
    "contiguous": (lambda S: S, lambda T, t, S: t),
    "permuted": (lambda S: S[::-1], lambda T, t, S: t.permute(*reversed(range(len(S))))),
    "stepped": (lambda S: (2 * S[0] - 1,) + S[1:], lambda T, t, S: t[::2]),
    "negative_step": (lambda S: S[:-1] + (2 * S[-1],),
                      lambda T, t, S: t.flip(-1)[..., ::2] if T else t[..., ::-2]),
    "flipped": (lambda S: S, lambda T, t, S: t.flip((0, len(S) - 1))),
    "padded": (lambda S: tuple(s - 2 for s in S),
               lambda T, t, S: _pad(T, t, [(1, 1)] * len(S))),
    "expanded": (lambda S: (1,) + S[1:], lambda T, t, S: t.expand(*S)),
    "shrunk": (lambda S: tuple(s + 3 for s in S),
               lambda T, t, S: t[tuple(slice(1, 1 + s) for s in S)]),
    "permuted_stepped": (lambda S: S[-2::-1] + (3 * S[-1],),
                         lambda T, t, S: t[..., 1::3].permute(*range(len(S) - 2, -1, -1),
                                                               len(S) - 1)),
}


def _on_views(view, fn, S_list):
    base, make = VIEWS[view]
    return (lambda T, *ts: fn(T, *[make(T, t, S) for t, S in zip(ts, S_list)]),
            [base(S) for S in S_list])


def _sdpa(q, k, v, mask=None, causal=False):
    """torch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(d) + mask) v."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril(), -np.inf)
    if mask is not None:
        s = s.masked_fill(~mask, -np.inf) if mask.dtype == torch.bool else s + mask
    return s.softmax(-1) @ v


def test_sdpa_attn_mask_with_is_causal_is_an_error():
    # tinygrad and torch raise "cannot set attn_mask when is_causal=True"; the mask was
    # silently combined with the causal one
    rng = np.random.default_rng(0)
    q, k = (Tensor(rng.standard_normal(s).astype(np.float32)) for s in ((2, 4, 8), (2, 6, 8)))
    mask = Tensor(rng.uniform(size=(4, 6)) > 0.5)
    with pytest.raises(PolygradValueError, match=r"cannot set attn_mask \(shape \(4, 6\)\) when "
                                                 r"is_causal=True"):
        q.scaled_dot_product_attention(k, k, attn_mask=mask, is_causal=True)


def test_sdpa_mask_shape_error_names_the_op():
    q = Tensor(np.ones((2, 3, 4), np.float32))
    with pytest.raises(PolygradValueError, match=r"scaled_dot_product_attention: attn_mask shape "
                                                 r"\(5, 5\) does not broadcast with the scores' "
                                                 r"\(2, 3, 3\)"):
        q.scaled_dot_product_attention(q, q, attn_mask=Tensor(np.ones((5, 5), bool)))


def _ones(*shape):
    return Tensor(np.ones(shape, np.float32))


@pytest.mark.parametrize("call, message", [
    (lambda: _ones(5, 6).binary_crossentropy(_ones(6, 5)),
     r"binary_crossentropy: target shape \(6, 5\) does not broadcast with input shape \(5, 6\)"),
    (lambda: _ones(5, 6).binary_crossentropy_logits(_ones(6, 5)),
     r"binary_crossentropy_logits: target shape \(6, 5\) does not broadcast with input shape "
     r"\(5, 6\)"),
    (lambda: _ones(5, 6).binary_crossentropy_logits(_ones(5, 6), pos_weight=_ones(5)),
     r"binary_crossentropy_logits: pos_weight shape \(5,\) does not broadcast with input shape "
     r"\(5, 6\)"),
    (lambda: _ones(2, 3).linear(_ones(4, 5)),
     r"linear: input shape \(2, 3\) and weight shape \(4, 5\) do not match"),
    (lambda: _ones(2, 3).linear(_ones(4, 3), _ones(5)),
     r"linear: bias shape \(5,\) does not broadcast with the output shape \(2, 4\)"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(2, 6, 8), _ones(2, 5, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(2, 6, 8\) and value \(2, 5, 8\) "
     r"do not fit"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(2, 6, 7), _ones(2, 6, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(2, 6, 7\)"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(3, 6, 8), _ones(3, 6, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(3, 6, 8\)"),
    (lambda: _ones(2, 3).lerp(_ones(3, 2), 0.5),
     r"lerp: shapes \(2, 3\), end \(3, 2\) and weight \(\) do not broadcast"),
    (lambda: _ones(2, 3).lerp(_ones(2, 3), _ones(3, 2)),
     r"lerp: shapes \(2, 3\), end \(2, 3\) and weight \(3, 2\) do not broadcast"),
])
def test_composite_shape_errors_name_the_op_and_operands(call, message):
    # these were the errors of the mul, add, sub or matmul inside ("mul: shapes (6, 5) and
    # (5, 6) do not broadcast"), naming neither the op nor which operand was wrong
    with pytest.raises(PolygradValueError, match=message):
        call()


def _amax(T, a, axis=None, keepdim=False):
    if not T:
        return a.max(axis, keepdim)
    return a.amax(dim=tuple(range(a.ndim)) if axis is None else axis, keepdim=keepdim)


def _cat(T, *ts, dim=0):
    return torch.cat(ts, dim) if T else Tensor.cat(*ts, dim=dim)


_IDX = np.random.default_rng(7).integers(0, 4, (3, 2, 5))

# Op families fed non-contiguous inputs: (fn, input shapes, atol)
FAMILIES = {
    "elementwise": (lambda T, a, b: (a * b - b.exp()) / (a.abs() + 1), [(3, 4, 5)] * 2, 1e-5),
    "where_maximum": (lambda T, a, b: (torch.where(a > b, a, b * 2) if T
                                       else (a > b).where(a, b * 2))
                      + a.minimum(b).maximum(b * 0.5), [(3, 4, 5)] * 2, 1e-5),
    "clip": (lambda T, a: a.clip(-0.5, 0.7), [(3, 4, 5)], 1e-5),
    "sum_axes": (lambda T, a: a.sum((0, 2)), [(3, 4, 5)], 1e-5),
    "mean_keepdim": (lambda T, a: a.mean(-1, keepdim=True) if T else a.mean(-1, True),
                     [(3, 4, 5)], 1e-5),
    "max_axis": (lambda T, a: _amax(T, a, 1), [(3, 4, 5)], 1e-5),
    "var_std": (lambda T, a: [a.var(0), a.std((1, 2))], [(3, 4, 5)], 1e-5),
    "argmax": (lambda T, a: a.argmax(1).float(), [(3, 4, 5)], 0),
    "cumsum": (lambda T, a: a.cumsum(1), [(3, 4, 5)], 1e-5),
    "softmax_axis0": (lambda T, a: a.softmax(0) + a.log_softmax(1), [(3, 4, 5)], 1e-5),
    "matmul": (lambda T, a, b: a @ b, [(3, 4, 5), (3, 5, 3)], 1e-4),
    "conv2d": (lambda T, x, w: F.conv2d(x, w, padding=1) if T else x.conv2d(w, padding=1),
               [(3, 3, 6, 6), (4, 3, 3, 3)], 1e-4),
    "max_pool2d": (lambda T, x: F.max_pool2d(x, 2) if T else x.max_pool2d(2), [(3, 3, 6, 6)],
                   1e-5),
    "avg_pool2d": (lambda T, x: F.avg_pool2d(x, 3, 2, 1) if T else x.avg_pool2d(3, 2, 1),
                   [(3, 3, 6, 6)], 1e-5),
    "gather": (lambda T, a: a.gather(1, torch.tensor(_IDX) if T else Tensor(_IDX.astype(np.int32))),
               [(3, 4, 5)], 1e-5),
    "cat": (lambda T, a, b: _cat(T, a, b, dim=-2), [(3, 4, 5)] * 2, 1e-5),
    "getitem": (lambda T, a: a[1:, None, ::2, -1], [(3, 4, 5)], 1e-5),
    "layernorm": (lambda T, a: F.layer_norm(a, (4, 5)) if T else a.layernorm((-2, -1)),
                  [(3, 4, 5)], 1e-4),
    "einsum": (lambda T, a, b: torch.einsum("bij,bkj->bki", a, b) if T
               else Tensor.einsum("bij,bkj->bki", a, b), [(3, 4, 5), (3, 3, 5)], 1e-4),
}


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_ops_on_non_contiguous_views(family, view):
    fn, shapes, atol = FAMILIES[family]
    f, base = _on_views(view, fn, shapes)
    _run(f, base, grad=family != "argmax", atol=max(atol, 1e-6), rtol=1e-4 if atol > 1e-5 else 1e-5)


_AXES = [None, 0, -1, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("axis", _AXES)
def test_reduction_axes(axis, keepdim):
    full = tuple(range(3)) if axis is None else axis
    _run(lambda T, a: [a.sum(full, keepdim=keepdim), a.mean(full, keepdim=keepdim),
                       _amax(T, a, full, keepdim), a.amin(full, keepdim=keepdim)] if T else
         [a.sum(axis, keepdim), a.mean(axis, keepdim), a.max(axis, keepdim),
          a.min(axis, keepdim)], [(3, 4, 5)])


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("axis", _AXES)
def test_var_std_correction(axis, correction):
    _run(lambda T, a: [torch.var(a, axis, correction=correction, keepdim=True),
                       torch.std(a, axis, correction=correction)] if T else
         [a.var(axis, True, correction), a.std(axis, correction=correction)], [(3, 4, 5)])


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_with_ties(axis, keepdim):
    # the first of tied positions, as torch (the values repeat every 3 along axis 1)
    x = np.tile(np.random.default_rng(3).integers(0, 3, (3, 3, 4)), (1, 2, 1)).astype(np.float32)
    _run(lambda T, a: [a.argmax(axis, keepdim=keepdim), a.argmin(axis, keepdim=keepdim)] if T
         else [a.argmax(axis, keepdim), a.argmin(axis, keepdim)], None, xs=[x], grad=False)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_cumsum_softmax_every_axis(axis):
    _run(lambda T, a: [a.cumsum(axis), a.softmax(axis), a.log_softmax(axis),
                       a.logsumexp(axis)], [(3, 4, 5)], atol=1e-5, rtol=1e-4)


def test_max_min_ties_split_the_gradient_evenly():
    # tinygrad's and torch's amax/amin: each tied position gets an equal share; maximum and
    # minimum of equal elements give each side half, as torch's
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [5, -1, 5, 5]], np.float32)
    _run(lambda T, a: [_amax(T, a, 1), _amax(T, a), _amax(T, a.T, 0, True),
                       a.amin(0) if T else a.min(0)], None, xs=[x])
    y = np.array([[1, 2, 3, 2], [1, 3, 3, 1], [0, 0, 5, 5]], np.float32)
    _run(lambda T, a, b: [torch.maximum(a, b), torch.minimum(a, b)] if T
         else [a.maximum(b), a.minimum(b)], None, xs=[x, y])


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_cat_stack_split_chunk_uneven_and_negative_dims(dim):
    d = dim % 3
    s2, s3 = [3, 4, 5], [3, 4, 5]
    s2[d], s3[d] = 2, 1
    _run(lambda T, a, b, c: _cat(T, a, b, c, dim=dim), [(3, 4, 5), tuple(s2), tuple(s3)])
    _run(lambda T, a, b: torch.stack([a, b], dim) if T else Tensor.stack(a, b, dim=dim),
         [(3, 4, 5)] * 2)
    n = (3, 4, 5)[d]
    sizes = [1, n - 1] if n > 2 else [n]
    _run(lambda T, a: list(a.split(2, dim)) + list(a.split(sizes, dim)), [(3, 4, 5)])
    _run(lambda T, a: list(a.chunk(2, dim)) + list(a.chunk(4, dim)) + list(a.chunk(7, dim)),
         [(3, 4, 5)])


def _torch_index(a, idx):
    """a[idx] in torch, whose slices take no negative step: a negative step is an index_select."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    real = sum(i is not None and i is not Ellipsis for i in idx)
    full = []
    for i in idx:
        full += [slice(None)] * (a.ndim - real) if i is Ellipsis else [i]
    if Ellipsis not in idx:
        full += [slice(None)] * (a.ndim - real)
    d = 0
    for i in full:
        if i is None:
            a, d = a.unsqueeze(d), d + 1
        elif isinstance(i, int):
            a = a.select(d, i)
        else:
            a, d = a.index_select(d, torch.tensor(range(*i.indices(a.shape[d])),
                                                  dtype=torch.long)), d + 1
    return a


@pytest.mark.parametrize("idx", [
    0, -1, slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    slice(-2, None), slice(-10, 10), slice(3, 1), (1, 2), (-1, slice(None), 2), (None, 0),
    (Ellipsis, 1), (Ellipsis, None, slice(1, None, 2)), (slice(None), None, -2, Ellipsis),
    (0, Ellipsis, 0), (slice(None, None, -2), slice(1, None, 3), -1), (None, Ellipsis, None),
    (-4, -5, -6), Ellipsis], ids=repr)
def test_getitem_variants(idx):
    _run(lambda T, a: _torch_index(a, idx) if T else a[idx], [(4, 5, 6)])
    f, base = _on_views("permuted_stepped", lambda T, a: _torch_index(a, idx) if T else a[idx],
                        [(4, 5, 6)])
    _run(f, base)


@pytest.mark.parametrize("index", [[0, 2, 1], [-1, 0], [[0, 1], [3, -2]], [3, 3, 0]])
def test_tensor_and_list_indices(index):
    arr = np.array(index)
    _run(lambda T, a: a[torch.tensor(arr)] if T else a[Tensor(arr.astype(np.int32))],
         [(4, 5, 6)])
    _run(lambda T, a: a.flip(0)[torch.tensor(arr)] if T else a.flip(0)[arr], [(4, 5, 6)])


@pytest.mark.parametrize("formula, shapes", [
    ("ij->ji", [(3, 4)]), ("ii->", [(4, 4)]), ("ii->i", [(4, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,j->ij", [(3,), (4,)]), ("ijk->j", [(2, 3, 4)]),
    ("ij,ij->", [(3, 4)] * 2), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ji", [(3, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]), ("...i,...i->...", [(1, 3, 4), (2, 1, 4)]),
    ("a...b,b...->a...", [(2, 3, 4), (4, 3)]), ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)])])
def test_einsum_forms(formula, shapes):
    _run(lambda T, *xs: torch.einsum(formula, *xs) if T else Tensor.einsum(formula, *xs), shapes,
         atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("pattern, shape, sizes, torch_fn", [
    ("a b c -> c b a", (2, 3, 4), {}, lambda t: t.permute(2, 1, 0)),
    ("a b c -> a (b c)", (2, 3, 4), {}, lambda t: t.reshape(2, 12)),
    ("a (b c) -> a b c", (2, 12), {"b": 3}, lambda t: t.reshape(2, 3, 4)),
    ("(a b) c -> b a c", (6, 4), {"a": 2}, lambda t: t.reshape(2, 3, 4).permute(1, 0, 2)),
    ("a b c -> a 1 b c", (2, 3, 4), {}, lambda t: t.unsqueeze(1)),
    ("a 1 c -> a c", (2, 1, 4), {}, lambda t: t.squeeze(1)),
    ("... c -> c ...", (2, 3, 4), {}, lambda t: t.permute(2, 0, 1)),
    ("b (h w) c -> b c h w", (2, 6, 3), {"h": 2},
     lambda t: t.reshape(2, 2, 3, 3).permute(0, 3, 1, 2)),
    ("a b c -> (c a) b", (2, 3, 4), {}, lambda t: t.permute(2, 0, 1).reshape(8, 3)),
    ("a ... c -> (a c) ...", (2, 3, 5, 4), {}, lambda t: t.permute(0, 3, 1, 2).reshape(8, 3, 5)),
    ("b ... -> b (...)", (2, 3, 4), {}, lambda t: t.reshape(2, 12))])
def test_rearrange_patterns(pattern, shape, sizes, torch_fn):
    _run(lambda T, a: torch_fn(a.flip(0)) if T else a.flip(0).rearrange(pattern, **sizes), [shape])


@pytest.mark.parametrize("kw", [{}, {"stride": 2}, {"stride": (1, 2)}, {"padding": 1},
                                {"padding": (2, 1)}, {"dilation": 2},
                                {"dilation": (1, 2), "padding": (1, 0)},
                                {"stride": 2, "padding": 1, "dilation": 2}], ids=repr)
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_arguments(kw, groups):
    _run(lambda T, x, w, b: F.conv2d(x, w, b, groups=groups, **kw) if T
         else x.conv2d(w, b, groups=groups, **kw),
         [(2, 4, 9, 8), (6, 4 // groups, 3, 2), (6,)], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kw", [
    {"kernel_size": 3, "stride": 1}, {"kernel_size": (2, 3), "stride": (1, 2)},
    {"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 3, "ceil_mode": True},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 2, "stride": 3}, {"kernel_size": (3, 2), "padding": (1, 0)},
    {"kernel_size": 2, "padding": 1, "ceil_mode": True}], ids=repr)
def test_pool2d_arguments(kw):
    _run(lambda T, x: F.max_pool2d(x, **kw) if T else x.max_pool2d(**kw), [(2, 3, 9, 8)])
    _run(lambda T, x: F.avg_pool2d(x, **kw) if T else x.avg_pool2d(**kw), [(2, 3, 9, 8)])
    _run(lambda T, x: F.avg_pool2d(x, count_include_pad=False, **kw) if T
         else x.avg_pool2d(count_include_pad=False, **kw), [(2, 3, 9, 8)])
    dil = dict(kw, dilation=2)
    _run(lambda T, x: F.max_pool2d(x, **dil) if T else x.max_pool2d(**dil), [(2, 3, 9, 8)])


@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape, axis", [((5, 7), -1), ((4, 6, 3), 1), ((4, 3, 6), -1),
                                         ((7,), 0)])
def test_cross_entropy_arguments(shape, axis, reduction, label_smoothing, ignore_index):
    ax = axis % len(shape)
    target = np.random.default_rng(3).integers(0, shape[ax], shape[:ax] + shape[ax + 1:])
    target.reshape(-1)[::3] = 2
    kw = dict(reduction=reduction, label_smoothing=label_smoothing, ignore_index=ignore_index)
    _run(lambda T, x: F.cross_entropy(x.movedim(ax, 1) if x.ndim > 1 else x,
                                      torch.tensor(target), **kw) if T
         else x.cross_entropy(Tensor(target.astype(np.int32)), axis=axis, **kw), [shape])
    probs = np.random.default_rng(4).dirichlet(np.ones(shape[ax]), shape[:ax] + shape[ax + 1:])
    probs = np.moveaxis(probs, -1, ax).astype(np.float32)
    kw.pop("ignore_index")
    _run(lambda T, x: F.cross_entropy(x.movedim(ax, 1) if x.ndim > 1 else x,
                                      torch.tensor(probs).movedim(ax, 1) if x.ndim > 1
                                      else torch.tensor(probs), **kw) if T
         else x.cross_entropy(Tensor(probs), axis=axis, **kw), [shape])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_crossentropy_arguments(reduction):
    y = np.random.default_rng(4).uniform(0, 1, (3, 5)).astype(np.float32)
    pw = np.random.default_rng(6).uniform(0.5, 2, (5,)).astype(np.float32)
    _run(lambda T, x: F.binary_cross_entropy(x.T.sigmoid(), torch.tensor(y), reduction=reduction)
         if T else x.T.sigmoid().binary_crossentropy(Tensor(y), reduction=reduction), [(5, 3)])
    _run(lambda T, x: F.binary_cross_entropy_with_logits(x.flip(0), torch.tensor(y),
                                                          reduction=reduction,
                                                          pos_weight=torch.tensor(pw)) if T
         else x.flip(0).binary_crossentropy_logits(Tensor(y), reduction=reduction,
                                                   pos_weight=Tensor(pw)), [(3, 5)])


@pytest.mark.parametrize("axes", [-1, (-2, -1), (1, 2), 0, (0, 2), (-3, -1)], ids=repr)
def test_layernorm_axes(axes):
    ta = axes if isinstance(axes, tuple) else (axes,)

    def ref(x):
        d = x - x.mean(ta, keepdim=True)
        return d / torch.sqrt((d * d).mean(ta, keepdim=True) + 1e-5)
    _run(lambda T, x: ref(x.permute(2, 0, 1)) if T else x.permute(2, 0, 1).layernorm(axes),
         [(4, 5, 3)], atol=1e-4, rtol=1e-4)


def test_sdpa_masks_and_causal():
    rng = np.random.default_rng(7)
    qs, ks = (2, 3, 4, 8), (2, 3, 6, 8)
    bool_mask = rng.uniform(size=(2, 1, 4, 6)) > 0.3
    bool_mask[..., 0] = True
    float_mask = rng.uniform(-1, 1, (1, 3, 1, 6)).astype(np.float32)
    for mask in (bool_mask, float_mask):
        _run(lambda T, q, k, v: _sdpa(q, k, v, torch.tensor(mask)) if T
             else q.scaled_dot_product_attention(k, v, attn_mask=Tensor(mask)), [qs, ks, ks],
             atol=1e-4, rtol=1e-4)
    for s in (qs, ks):  # L < S and L == S
        _run(lambda T, q, k, v: _sdpa(q, k, v, causal=True) if T
             else q.scaled_dot_product_attention(k, v, is_causal=True), [s, ks, ks],
             atol=1e-4, rtol=1e-4)
    # a float mask is differentiable; q, k and v as transposed and stepped views
    _run(lambda T, q, k, v, m: _sdpa(q.transpose(1, 2), k.transpose(1, 2),
                                     v[..., ::2].transpose(1, 2), m) if T
         else q.transpose(1, 2).scaled_dot_product_attention(
             k.transpose(1, 2), v[..., ::2].transpose(1, 2), attn_mask=m),
         [(2, 4, 3, 8), (2, 6, 3, 8), (2, 6, 3, 10), (4, 6)], atol=1e-4, rtol=1e-4)


def test_where_clip_minimum_maximum_broadcasting():
    shapes = [(3, 1, 5), (4, 1), (1, 1, 1)]
    _run(lambda T, c, a, b: torch.where(c > 0, a, b) if T else (c > 0).where(a, b), shapes)
    _run(lambda T, c, a: torch.where(c > 0, a, 0.5) if T else (c > 0).where(a, 0.5), shapes[:2])
    _run(lambda T, a, b: [torch.maximum(a, b), torch.minimum(a, b)] if T
         else [a.maximum(b), a.minimum(b)], shapes[:2])
    _run(lambda T, a, lo, hi: torch.clamp(a, lo, hi) if T else a.clip(lo, hi),
         [(3, 4, 5), (4, 1), (5,)])
    _run(lambda T, a: [torch.clamp(a, min=-0.5), torch.clamp(a, max=0.5), torch.clamp(a, 1, -1)]
         if T else [a.clip(-0.5), a.clip(None, 0.5), a.clip(1.0, -1.0)], [(3, 5)])
