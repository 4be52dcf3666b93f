"""Products of one row with a large weight (issue 37's decoding step): `x @ w` with w (k, n),
which the cpu strategy runs in k slices over about a page of every row of w per launch step
(docs/compiler.md), and `x @ w.T`, in the dot form. Values against numpy in float64, for
columns no vector divides and ones that blocks of 8 vectors do not, and for the same weight
read by one row and by several (another kernel, the rows a launch variable)."""
import numpy as np
import pytest

from polygrad import Tensor

RNG = np.random.default_rng(11)


def _check(got, x, w):
    want = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("k, n", [(768, 50257), (768, 5003), (100, 6144), (300, 4128), (33, 1000)])
def test_one_row_times_w(k, n):
    w = RNG.standard_normal((k, n)).astype(np.float32)
    pw = (Tensor(w) * 1).realize()  # a buffer of polygrad's own
    for rows in (1, 2, 1):
        x = RNG.standard_normal((rows, k)).astype(np.float32)
        _check((Tensor(x) @ pw).numpy(), x, w)


@pytest.mark.parametrize("k, n", [(768, 50257), (768, 5003)])
def test_one_row_times_w_transposed(k, n):
    w = RNG.standard_normal((n, k)).astype(np.float32)
    pw = (Tensor(w) * 1).realize()
    for rows in (1, 3):
        x = RNG.standard_normal((rows, k)).astype(np.float32)
        _check((Tensor(x) @ pw.T).numpy(), x, w.T)


def test_one_row_times_w_fused_with_bias_and_scale():
    # The stored value a + b * sum (a bias, a scale) over k slices: the first slice stores
    # a + b * partial, later ones add b * partial.
    k, n = 768, 5003
    w = RNG.standard_normal((k, n)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    x = RNG.standard_normal((1, k)).astype(np.float32)
    pw, pb = (Tensor(w) * 1).realize(), (Tensor(b) * 1).realize()
    got = (pb + (Tensor(x) @ pw) * 0.5).numpy()
    want = b.astype(np.float64) + 0.5 * (x.astype(np.float64) @ w.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
