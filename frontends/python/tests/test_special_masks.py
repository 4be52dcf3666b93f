"""log1p, expm1, hyperbolic and inverse trigonometric functions, the activations built on
them, and masks and selections, against torch: values and gradients."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import compare
from polygrad import Tensor

WIDE = dict(low=-4.0, high=4.0)
UNIT = dict(low=-0.95, high=0.95)


@pytest.mark.parametrize("name,kw", [
    ("log1p", dict(low=-0.9, high=4.0)), ("expm1", WIDE), ("log10", dict(low=0.01, high=50.0)),
    ("sinh", WIDE), ("cosh", WIDE), ("asinh", WIDE), ("acosh", dict(low=1.01, high=30.0)),
    ("atanh", UNIT), ("atan", dict(low=-30.0, high=30.0)), ("asin", UNIT), ("acos", UNIT)])
def test_special_functions(name, kw):
    compare(lambda x: getattr(x, name)(), [(5, 40)], lambda x: getattr(torch, name)(x), **kw)


def test_isfinite():
    v = [1.0, float("inf"), -float("inf"), float("nan"), 0.0, -3e38]
    np.testing.assert_array_equal(Tensor(v).isfinite().numpy(), [1, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(Tensor([3, -2]).isfinite().numpy(), [1, 1])


@pytest.mark.parametrize("name,fn", [
    ("logsigmoid", F.logsigmoid), ("softsign", F.softsign), ("selu", F.selu),
    ("celu", lambda x: F.celu(x, 0.7))])
def test_activations(name, fn):
    f = (lambda x: x.celu(0.7)) if name == "celu" else (lambda x: getattr(x, name)())
    compare(f, [(5, 40)], fn, low=-10.0, high=10.0)


def test_masks_and_selections():
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    t, p = torch.tensor(x), Tensor(x)
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(p.tril(k).numpy(), t.tril(k).numpy())
        np.testing.assert_array_equal(p.triu(k).numpy(), t.triu(k).numpy())
    m = x[0] > 0
    np.testing.assert_array_equal(p.masked_fill(Tensor(m), -7.0).numpy(),
                                  t.masked_fill(torch.tensor(m), -7.0).numpy())
    cls = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(Tensor(cls).one_hot(5).numpy(),
                                  F.one_hot(torch.tensor(cls), 5).numpy())
    np.testing.assert_array_equal(Tensor(cls).one_hot().numpy(),
                                  F.one_hot(torch.tensor(cls)).numpy())
    np.testing.assert_array_equal((p > 1).any(axis=2).numpy(), (t > 1).any(2).numpy())
    np.testing.assert_array_equal((p > -1).all(axis=(0, 2)).numpy(),
                                  (t > -1).all(2).all(0).numpy())
    np.testing.assert_array_equal(p.logical_and(p > 0).numpy(),
                                  torch.logical_and(t, t > 0).numpy())
    np.testing.assert_array_equal((p > 1).logical_or(p < -1).numpy(),
                                  torch.logical_or(t > 1, t < -1).numpy())
    np.testing.assert_array_equal(p.roll((1, -2), (0, 2)).numpy(), t.roll((1, -2), (0, 2)).numpy())
    np.testing.assert_array_equal(p.roll(7).numpy(), t.roll(7).numpy())
    compare(lambda a, b: a.lerp(b, 0.3), [(4, 5), (4, 5)], lambda a, b: torch.lerp(a, b, 0.3))
    compare(lambda a, b, w: a.lerp(b, w), [(4, 5), (4, 5), (5,)],
            lambda a, b, w: torch.lerp(a, b, w))
    compare(lambda a, b: a.outer(b), [(4,), (6,)], lambda a, b: torch.outer(a, b))
    compare(lambda a: a.roll(2, 1).tril(), [(4, 5)], lambda a: a.roll(2, 1).tril())
