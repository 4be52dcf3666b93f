"""First derivatives at the edges of ops' domains and the gradient API's argument forms,
against torch's autograd in float64."""
import numpy as np
import torch

from polygrad import Tensor


def test_pow_tensor_exponent_gradient_at_zero_exponent():
    # x^0 is 1 for every x, but d/dy x^y at y = 0 is ln x (it was 0: the result was the
    # constant 1 wherever y = 0). At x = 0, +-inf and NaN, 1 stays a constant.
    a = np.array([2.0, 0.5, 3.0, 0.0, np.inf, np.nan])
    b = np.zeros(6)
    pa, pb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    ga, gb = (pa ** pb).sum().gradient(pa, pb)
    np.testing.assert_array_equal((pa ** pb).numpy(), np.ones(6))
    np.testing.assert_allclose(gb.numpy()[:4], [np.log(2.0), np.log(0.5), np.log(3.0), 0.0],
                               rtol=1e-15)
    ta, tb = torch.tensor(a[:4], requires_grad=True), torch.tensor(b[:4], requires_grad=True)
    tga, tgb = torch.autograd.grad((ta ** tb).sum(), (ta, tb))
    np.testing.assert_allclose(gb.numpy()[:4], tgb.numpy(), rtol=1e-15)
    np.testing.assert_array_equal(ga.numpy()[:4], tga.numpy())


def test_gradient_takes_a_list_as_root_gradient_as_backward_does():
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    (g,) = (x * x).gradient(x, gradient=[1.0, 0.5, 2.0])
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0, 12.0])


def test_abs_of_zero_is_positive_zero_with_gradient_zero():
    # max(x, -x) gave -0 at +0 (a tie keeps the second operand): 1 / |0| was -inf, as was
    # rsqrt(|0|). The gradient at 0 is 0 (g * sign(0)), as torch's.
    for dtype in (np.float32, np.float64):
        x = np.array([0.0, -0.0, -2.5, 3.0, np.inf, -np.inf], dtype=dtype)
        p = Tensor(x, requires_grad=True)
        a = p.abs()
        assert not np.signbit(a.numpy()).any()
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal((1.0 / a).numpy(), 1.0 / np.abs(x))
        (g,) = a.sum().gradient(p)
        t = torch.tensor(x, requires_grad=True)
        (tg,) = torch.autograd.grad(t.abs().sum(), t)
        np.testing.assert_array_equal(g.numpy(), tg.numpy())
    assert np.isnan(Tensor(np.array([np.nan])).abs().numpy()).all()


def test_pow_tensor_exponent_gradients_at_a_zero_base():
    # torch's: d/dx = y x^(y-1) (1 at y = 1, inf for 0 < y < 1, -+inf for y < 0 by the sign
    # of (+-0)^(y-1)) and d/dy = x^y ln x, 0 for y >= 0. Both were 0 for every y, and
    # (-0)^-1 was inf (IEEE's and torch's -inf).
    a = np.array([0.0] * 5 + [-0.0] * 4)
    b = np.array([2.0, 1.0, 0.5, -1.0, -2.0, 1.0, 0.5, -1.0, -2.0])
    pa, pb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = pa ** pb
    ga, gb = out.sum().gradient(pa, pb)
    inf = np.inf
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0, inf, inf, 0, 0, -inf, inf])
    np.testing.assert_array_equal(ga.numpy(), [0, 1, inf, -inf, -inf, 1, inf, -inf, inf])
    np.testing.assert_array_equal(gb.numpy(), [0, 0, 0, -inf, -inf, 0, 0, inf, -inf])


def test_zeroth_power_gradient_at_an_infinite_base():
    # x^0 = 1 at +-inf too, with torch's gradient 0 in x: 2^(0 * log2 inf) was a discarded
    # branch whose value, NaN, made its gradient 0 * NaN = NaN.
    x = np.array([np.inf, -np.inf, 2.0])
    for e in (0, 0.0, Tensor(np.zeros(3))):
        p = Tensor(x, requires_grad=True)
        out = p ** e
        (g,) = out.sum().gradient(p)
        np.testing.assert_array_equal(out.numpy(), [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])


def test_negative_integer_power_gradient_at_zero_and_infinity():
    # torch's -n x^(-n-1): 1 / x^n took inf * 0 = NaN through x^n at x = +-0 and +-inf.
    x = np.array([0.0, -0.0, np.inf, -np.inf, 2.0])
    p = Tensor(x, requires_grad=True)
    (g2,) = (p ** -2).sum().gradient(p)
    (g3,) = (p ** -3).sum().gradient(p)
    np.testing.assert_array_equal(g2.numpy(), [-np.inf, np.inf, 0.0, 0.0, -0.25])
    np.testing.assert_array_equal(g3.numpy(), [-np.inf, -np.inf, 0.0, 0.0, -0.1875])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal((p ** -2).numpy(), 1.0 / (x * x))


def test_division_gradient_in_the_divisor_is_torchs_quotient_form():
    # -g (x/y)/y as torch's: -g x/y^2 overflowed in y^2 (0 for 1e200 / 1e200, torch's
    # -1e-200), and its own derivative took 0 * inf = NaN through y*y at y = 0 (torch: +-inf).
    n = np.array([1.0, 1.0, 1e200, 3.0])
    y = Tensor(np.array([0.0, -0.0, 1e200, 4.0]), requires_grad=True)
    (g,) = (Tensor(n) / y).sum().gradient(y)
    (g2,) = g.sum().gradient(y)
    np.testing.assert_array_equal(g.numpy(), [-np.inf, -np.inf, -1e-200, -0.1875])
    np.testing.assert_array_equal(g2.numpy(), [np.inf, -np.inf, 0.0, 0.09375])


def test_maximum_and_minimum_pass_the_gradient_to_both_sources_at_a_nan():
    # torch's: a NaN compares unordered, so neither source is the smaller and each takes g
    # (both took 0); a tie still splits g in halves.
    nan = np.nan
    a = Tensor(np.array([nan, 1.0, 2.0, 3.0]), requires_grad=True)
    b = Tensor(np.array([0.0, nan, 2.0, 1.0]), requires_grad=True)
    ga, gb = a.maximum(b).sum().gradient(a, b)
    np.testing.assert_array_equal(ga.numpy(), [1.0, 1.0, 0.5, 1.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 1.0, 0.5, 0.0])
    ga, gb = a.minimum(b).sum().gradient(a, b)
    np.testing.assert_array_equal(ga.numpy(), [1.0, 1.0, 0.5, 0.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 1.0, 0.5, 1.0])


def test_clamp_gradient_at_nan_is_zero():
    # torch's clamp passes g where min <= x <= max, which a NaN is not (the selects gave 1);
    # its value stays NaN.
    x = np.array([np.nan, 0.5, 2.0, -2.0, 1.0])
    for lo, hi, want in [(-1.0, 1.0, [0, 1, 0, 0, 1]), (-1.0, None, [0, 1, 1, 0, 1]),
                         (None, 1.0, [0, 1, 0, 1, 1])]:
        p = Tensor(x, requires_grad=True)
        out = p.clamp(lo, hi)
        (g,) = out.sum().gradient(p)
        np.testing.assert_array_equal(g.numpy(), want)
        assert np.isnan(out.numpy()[0])


def test_pow_tensor_exponent_gradients_at_a_negative_base_are_torchs_nan():
    # x^y of a negative x: NaN in y always (torch's x^y ln x; it was ln|x| x^y) and in x too
    # where y is not whole and the value is NaN (it was 0); a whole y keeps y x^(y-1) in x.
    a = Tensor(np.array([-2.0, -2.0, -2.0, -0.5, 2.0]), requires_grad=True)
    b = Tensor(np.array([2.0, 3.0, 0.5, -1.5, 0.5]), requires_grad=True)
    out = a ** b
    ga, gb = out.sum().gradient(a, b)
    nan = np.nan
    np.testing.assert_allclose(out.numpy(), [4.0, -8.0, nan, nan, np.sqrt(2.0)], rtol=1e-15)
    np.testing.assert_allclose(ga.numpy(), [-4.0, 12.0, nan, nan, 0.5 / np.sqrt(2.0)],
                               rtol=1e-15)
    np.testing.assert_allclose(gb.numpy(), [nan, nan, nan, nan, np.sqrt(2.0) * np.log(2.0)],
                               rtol=1e-15)


def test_hardswish_gradient_at_minus_infinity_is_zero():
    # torch's 0 (x < -3); the middle piece x (x + 3) / 6, discarded there, read -inf and gave
    # 0 * -inf = NaN. The bounds keep the middle piece's x / 3 + 1/2, a NaN x's 1.
    x = np.array([-np.inf, -3.0, 3.0, np.inf, -4.0, np.nan])
    p = Tensor(x, requires_grad=True)
    (g,) = p.hardswish().sum().gradient(p)
    np.testing.assert_array_equal(g.numpy(), [0.0, -0.5, 1.5, 1.0, 0.0, 1.0])
