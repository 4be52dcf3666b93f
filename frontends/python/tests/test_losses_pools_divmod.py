"""Loss reductions and ignore_index, pooling's ceil_mode and count_include_pad, and // and %,
against torch: values and gradients."""
import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import compare
from polygrad import Tensor


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_reductions_and_ignore_index(reduction, smoothing):
    y = np.array([1, -100, 3, 4, 0, -100])
    compare(lambda x: x.cross_entropy(Tensor(y), reduction=reduction, label_smoothing=smoothing),
            [(6, 5)],
            lambda x: F.cross_entropy(x, torch.tensor(y), reduction=reduction,
                                      label_smoothing=smoothing))
    y0 = np.array([1, 0, 3, 4, 0, 2])
    compare(lambda x: x.cross_entropy(Tensor(y0), reduction=reduction, label_smoothing=smoothing,
                                      ignore_index=0),
            [(6, 5)],
            lambda x: F.cross_entropy(x, torch.tensor(y0), reduction=reduction,
                                      label_smoothing=smoothing, ignore_index=0))


def test_cross_entropy_class_axis_and_tinygrad_sparse_default():
    y = np.array([[1, -100, 4], [0, 2, 2]])
    compare(lambda x: x.cross_entropy(Tensor(y), axis=1), [(2, 5, 3)],
            lambda x: F.cross_entropy(x, torch.tensor(y)))
    # tinygrad's sparse_categorical_crossentropy ignores class -1 unless told otherwise
    y = np.array([2, -1, 0, 1])
    compare(lambda x: x.sparse_categorical_crossentropy(Tensor(y)), [(4, 3)],
            lambda x: F.cross_entropy(x, torch.tensor(y), ignore_index=-1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_reductions_and_pos_weight(reduction):
    t = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 0, 0]], np.float32)
    compare(lambda x: x.binary_crossentropy(Tensor(t), reduction=reduction), [(3, 4)],
            lambda x: F.binary_cross_entropy(x, torch.tensor(t), reduction=reduction),
            low=0.05, high=0.95)
    compare(lambda x: x.binary_crossentropy_logits(Tensor(t), reduction=reduction), [(3, 4)],
            lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(t), reduction=reduction),
            low=-6, high=6)
    pw = np.array([0.5, 1.0, 2.0, 3.5], np.float32)
    compare(lambda x: x.binary_crossentropy_logits(Tensor(t), reduction=reduction,
                                                   pos_weight=Tensor(pw)), [(3, 4)],
            lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(t), reduction=reduction,
                                                         pos_weight=torch.tensor(pw)),
            low=-6, high=6)


def test_binary_cross_entropy_logits_gradient_at_zero_logits():
    # torch's: sigmoid(0) - y = 1/2 - y (weighted: (1 - y) / 2 - w y / 2)
    t = np.array([[1, 0, 1, 0]], np.float32)
    pw = np.array([0.5, 1.0, 2.0, 3.5], np.float32)
    zeros = [np.zeros((1, 4), np.float32)]
    compare(lambda x: x.binary_crossentropy_logits(Tensor(t), reduction="sum"), [], xs=zeros,
            torch_fn=lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(t),
                                                                  reduction="sum"))
    compare(lambda x: x.binary_crossentropy_logits(Tensor(t), reduction="sum",
                                                   pos_weight=Tensor(pw)), [], xs=zeros,
            torch_fn=lambda x: F.binary_cross_entropy_with_logits(
                x, torch.tensor(t), reduction="sum", pos_weight=torch.tensor(pw)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_at_probabilities_0_and_1(reduction):
    # torch's values (logs clamped at -100) and gradients, (p - y) / max(p (1 - p), 1e-12), where
    # p is 0, 1 or within 1e-12 of 0: finite, not 0 * inf = NaN.
    p = np.array([[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1e-13, 0.3, 0.999, 1 - 1e-7]], np.float32)
    y = np.array([[0.0, 1.0, 0.5, 0.0, 1.0, 0.25, 0.0, 0.7, 1.0, 1.0]], np.float32)
    compare(lambda x: x.binary_crossentropy(Tensor(y), reduction=reduction), [], xs=[p],
            torch_fn=lambda x: F.binary_cross_entropy(x, torch.tensor(y), reduction=reduction))
    # A sigmoid saturated to exactly 1 (or 0) in float32, as torch: gradient 0, not NaN.
    logits = np.array([[20.0, -120.0, 120.0, 0.5]], np.float32)
    yl = np.array([[1.0, 0.0, 0.0, 1.0]], np.float32)
    compare(lambda x: x.sigmoid().binary_crossentropy(Tensor(yl), reduction=reduction), [],
            xs=[logits], torch_fn=lambda x: F.binary_cross_entropy(x.sigmoid(), torch.tensor(yl),
                                                                   reduction=reduction))


def test_bad_reduction_names_the_choices():
    with pytest.raises(ValueError, match="'mean', 'sum' or 'none'"):
        Tensor([[0.5, 1.0]]).cross_entropy(Tensor([1]), reduction="avg")


@pytest.mark.parametrize("hw", [(9, 8), (7, 7), (10, 13)])
def test_pools_ceil_mode_and_count_include_pad(hw):
    shape = (2, 2) + hw
    for k, s, p in itertools.product([2, 3, (3, 2)], [1, 2, 3, (2, 1)], [0, 1]):
        if 2 * p > min(k if isinstance(k, tuple) else (k, k)):
            continue  # (torch requires padding <= kernel / 2)
        compare(lambda x: x.max_pool2d(k, s, padding=p, ceil_mode=True), [shape],
                lambda x: F.max_pool2d(x, k, s, p, ceil_mode=True), grad=False)
        for ceil, include in itertools.product([False, True], [False, True]):
            compare(lambda x: x.avg_pool2d(k, s, padding=p, ceil_mode=ceil,
                                           count_include_pad=include), [shape],
                    lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil,
                                           count_include_pad=include), grad=False)
    compare(lambda x: x.max_pool2d(3, 2, padding=1, ceil_mode=True), [shape],
            lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
    compare(lambda x: x.avg_pool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False),
            [shape], lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False))
    compare(lambda x: x.max_pool2d(2, 1, dilation=2, padding=1, ceil_mode=True), [shape],
            lambda x: F.max_pool2d(x, 2, 1, 1, dilation=2, ceil_mode=True))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_int_floordiv_and_mod_follow_torch(dtype):
    rng = np.random.default_rng(3)
    lo = 0 if dtype == "uint8" else -100
    a = rng.integers(lo, 100, 300).astype(dtype)
    b = rng.integers(lo // 10, 11, 300).astype(dtype)
    b[b == 0] = 7
    ta, tb = torch.tensor(a), torch.tensor(b)
    for got, want in [(Tensor(a) // Tensor(b), ta // tb),
                      (Tensor(a) % Tensor(b), torch.remainder(ta, tb)),
                      (Tensor(a).floor_divide(3), torch.div(ta, 3, rounding_mode="floor")),
                      (Tensor(a).remainder(3), torch.remainder(ta, 3)),
                      (50 // Tensor(b), torch.div(50, tb, rounding_mode="floor")),
                      (50 % Tensor(b), torch.remainder(torch.tensor(50, dtype=tb.dtype), tb))]:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_int_division_by_zero_gives_zero_and_never_traps():
    # numpy's answer (torch raises); INT_MIN // -1 wraps as numpy's does
    a = np.array([5, -5, 0, -2**31, -2**31], np.int32)
    b = np.array([0, 0, 0, -1, 0], np.int32)
    np.testing.assert_array_equal((Tensor(a) // Tensor(b)).numpy(), [0, 0, 0, -2**31, 0])
    np.testing.assert_array_equal((Tensor(a) % Tensor(b)).numpy(), [0, 0, 0, 0, 0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floordiv_and_mod_follow_torch(dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(400) * 50).astype(dtype)
    b = (rng.standard_normal(400) * 3).astype(dtype)
    a[:6] = [1.0, -1.0, 7.5, -7.5, 0.0, 5.0]
    b[:6] = [0.1, 0.1, 2.0, 2.0, 3.0, 0.0]
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_array_equal((Tensor(a) // Tensor(b)).numpy(), (ta // tb).numpy())
    np.testing.assert_array_equal((Tensor(a) % Tensor(b)).numpy(),
                                  torch.remainder(ta, tb).numpy())
    # the remainder's gradient: 1 for a, -floor(a / b) for b
    x, y = a[6:].astype(np.float32), b[6:].astype(np.float32)
    m = np.abs(x / y - np.round(x / y)) > 1e-3  # (away from the steps)
    compare(lambda x, y: x % y, [], lambda x, y: torch.remainder(x, y), xs=[x[m], y[m]])
