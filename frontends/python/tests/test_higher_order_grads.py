"""Second and third derivatives (gradient of a gradient, through Tensor.gradient) against
torch's autograd in float64, at points where a precise composition's own derivatives cancel."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from polygrad import Tensor

NEAR_ZERO = [0.0, 1e-300, -1e-300, 1e-17, -1e-17, 1e-9, -1e-9, 1e-4, -1e-4, 0.3, -0.3, -0.45]


def pg_derivatives(fn, x, order):
    """The first `order` derivatives of sum(fn(x)) elementwise (each of the previous one's sum)."""
    p = Tensor(np.array(x, dtype=np.float64), requires_grad=True)
    out, ds = fn(p).sum(), []
    for _ in range(order):
        (out,) = out.gradient(p)
        ds.append(out.numpy())
        out = out.sum()
    return ds


def derivatives(fn, x, order, torch_fn=None):
    """pg_derivatives and torch's."""
    t = torch.tensor(np.array(x, dtype=np.float64), requires_grad=True)
    out, ds = (torch_fn or fn)(t).sum(), []
    for _ in range(order):
        (out,) = torch.autograd.grad(out, t, create_graph=True)
        ds.append(out.detach().numpy().copy())
        out = out.sum()
    return pg_derivatives(fn, x, order), ds


@pytest.mark.parametrize("name,fn,torch_fn", [
    ("expm1", lambda x: x.expm1(), None),
    ("log1p", lambda x: x.log1p(), None),
    ("sinh", lambda x: x.sinh(), None),
    ("cosh", lambda x: x.cosh(), None),
    ("asinh", lambda x: x.asinh(), None),
    ("atanh", lambda x: x.atanh(), None),
    ("elu", lambda x: x.elu(0.7), lambda x: F.elu(x, 0.7)),
    ("selu", lambda x: x.selu(), F.selu),
    ("celu", lambda x: x.celu(0.5), lambda x: F.celu(x, 0.5)),
])
def test_third_derivatives_near_zero(name, fn, torch_fn):
    # expm1 and log1p take their values from quotients that cancel rounding (Kahan's, Goldberg's)
    # and x itself at |x| below half an ulp of 1; the quotients' second derivatives cancel
    # catastrophically (expm1'' was 624 at 1e-9, 1 expected) and x's are 0 (expm1''(0) was 0).
    pd, td = derivatives(fn, NEAR_ZERO, 3, torch_fn)
    for k, (p, t) in enumerate(zip(pd, td)):
        np.testing.assert_allclose(p, t, rtol=1e-9, atol=1e-12, err_msg=f"{name} order {k + 1}")


def test_elu_family_second_derivative_at_zero_is_torchs():
    # At the kink torch's first derivative is the negative branch's (alpha) and its second 0.
    for fn, tf in [(lambda x: x.elu(0.7), lambda x: F.elu(x, 0.7)), (Tensor.selu, F.selu),
                   (lambda x: x.celu(0.5), lambda x: F.celu(x, 0.5))]:
        pd, td = derivatives(fn, [0.0, -0.0], 2, tf)
        np.testing.assert_allclose(pd[0], td[0], rtol=1e-15)
        np.testing.assert_array_equal(pd[1], [0.0, 0.0])


def test_prod_second_derivative_at_zero_factors():
    # d2_j = sum_i d^2 prod / dx_i dx_j = sum over i != j of the product of the factors but i, j.
    # The first derivative's zeros (the products of the others that hold a zero) were constants,
    # so every derivative in a zero factor was lost: [2, 0, 3] gave [3, 0, 2].
    pd, td = derivatives(lambda x: x.prod(1), [[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]], 2,
                         lambda x: x.prod(1))
    np.testing.assert_allclose(pd[1], td[1], rtol=1e-15)
    np.testing.assert_allclose(pd[1], [[3.0, 5.0, 2.0], [5.0, 4.0, 3.0]], rtol=1e-15)
    # Two and three zeros (torch's first derivative has no graph there): by hand.
    pd = pg_derivatives(lambda x: x.prod(), [2.0, 0.0, 0.0, 4.0], 2)
    np.testing.assert_array_equal(pd[0], [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(pd[1], [0.0, 8.0, 8.0, 0.0])
    pd = pg_derivatives(lambda x: x.prod(), [0.0, 0.0, 0.0, 5.0], 2)
    np.testing.assert_array_equal(pd[1], [0.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("name,fn,x,d1,d2", [
    # torch 2.x: asin' = (1 - x^2)^-1/2, asin'' = x (1 - x^2)^-3/2, acosh'' = -x (x^2 - 1)^-3/2.
    ("asin", Tensor.asin, [-1.0, 1.0], [np.inf, np.inf], [-np.inf, np.inf]),
    ("acos", Tensor.acos, [-1.0, 1.0], [-np.inf, -np.inf], [np.inf, -np.inf]),
    ("acosh", Tensor.acosh, [1.0], [np.inf], [-np.inf]),
])
def test_second_derivatives_at_domain_edges_are_torchs(name, fn, x, d1, d2):
    # The precise compositions took inf * 0 = NaN for the second derivative at the edges.
    pd, td = derivatives(fn, x, 2, getattr(torch, name))
    np.testing.assert_array_equal(td[0], d1)
    np.testing.assert_array_equal(td[1], d2)
    np.testing.assert_array_equal(pd[0], d1)
    np.testing.assert_array_equal(pd[1], d2)
    np.testing.assert_array_equal(fn(Tensor(np.array(x))).numpy(), getattr(torch, name)(
        torch.tensor(x, dtype=torch.float64)).numpy())


def test_softsign_second_derivative_at_zero_is_torchs():
    # At the kink the one-sided second derivatives are +2 (left) and -2 (right): torch's is 0,
    # the odd composition took the right side's. The first is 1 on both sides.
    x = [0.0, -0.0, 0.5, -0.5, 2.0]
    pd, td = derivatives(Tensor.softsign, x, 2, F.softsign)
    np.testing.assert_array_equal(pd[0][:2], [1.0, 1.0])
    np.testing.assert_array_equal(pd[1][:2], [0.0, 0.0])
    np.testing.assert_allclose(pd[1], td[1], rtol=1e-15)
    np.testing.assert_allclose(pd[1][2:], [-2 / 1.5 ** 3, 2 / 1.5 ** 3, -2 / 27], rtol=1e-15)
