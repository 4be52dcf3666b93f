"""__getitem__ against numpy: ints, slices with any step, None, Ellipsis, lists and tensors."""
import numpy as np
import pytest

from polygrad import Tensor

A = np.arange(2 * 5 * 6, dtype=np.float64).reshape(2, 5, 6)


@pytest.mark.parametrize("ix", [
    np.s_[:2**64 + 1], np.s_[:2**63], np.s_[-2**64:], np.s_[::2**64 + 1], np.s_[::-2**64 - 1],
    np.s_[2**70:-2**70:-1], np.s_[-2**70:2**70:3], np.s_[:, 2**63 - 1::-2],
])
def test_slice_bounds_beyond_int64_clamp(ix):
    """Python's slices clamp any int; ctypes wrapped those beyond int64 (2**64 + 1 became 1,
    2**63 became -2**63)."""
    np.testing.assert_array_equal(Tensor(A)[ix].numpy(), A[ix])


@pytest.mark.parametrize("ix", [2**64, 2**63, -2**64 - 1, (0, 2**64 + 2)])
def test_int_index_beyond_int64_is_an_index_error(ix):
    """2**64 was read as 0 (ctypes wraps), and silently gave the first row."""
    with pytest.raises(IndexError):
        Tensor(A)[ix]


@pytest.mark.parametrize("ix", [True, False, (0, True), np.bool_(True), (Ellipsis, False)])
def test_bool_index_is_a_type_error(ix):
    """A bool is an int to Python: t[True] gave t[1], where numpy and torch add an axis."""
    with pytest.raises(TypeError, match="bool"):
        Tensor(A)[ix]
