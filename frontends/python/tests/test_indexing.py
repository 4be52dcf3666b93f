"""__getitem__ against numpy: ints, slices with any step, None, Ellipsis, lists and tensors."""
import numpy as np
import pytest

from polygrad import Tensor, TinyJit, nn

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



@pytest.mark.parametrize("bad", [[0, 4], [-5, 1]])
def test_input_index_tensors_outside_the_axis_raise_as_torch(bad, on_cpu):
    """An index tensor that holds data (a buffer in the cpu's memory) is checked, as torch
    checks every index: x[idx] and Embedding raise IndexError, gather and cross_entropy a
    ValueError naming the op (torch: RuntimeError, IndexError). A computed index's values are
    not known until the kernel runs: one outside the axis reads 0."""
    torch = pytest.importorskip("torch")
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array(bad)
    outside = idx[(idx < -4) | (idx >= 4)][0]
    with pytest.raises(IndexError):
        torch.tensor(w)[torch.tensor(idx)]
    with pytest.raises(IndexError, match=f"index {outside} is out of bounds for axis 0 with size 4"):
        Tensor(w)[Tensor(idx, dtype="int32")]
    with pytest.raises(IndexError):
        torch.nn.Embedding(4, 3)(torch.tensor(np.abs(idx) + 3))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        nn.Embedding(4, 3)(Tensor(np.abs(idx) + 3, dtype="int32"))
    rows = np.array([[outside, 0, 0]])
    with pytest.raises(RuntimeError):
        torch.tensor(w).gather(0, torch.tensor(rows))
    with pytest.raises(ValueError, match=f"gather: index {outside} is out of bounds for axis 0"):
        Tensor(w).gather(0, Tensor(rows, dtype="int32"))
    with pytest.raises(ValueError, match="cross_entropy: class 5 is out of range for 5 classes"):
        Tensor(np.zeros((2, 5), np.float32)).cross_entropy(Tensor(np.array([5, 0]), dtype="int32"))
    computed = Tensor(np.array([1, 2]), dtype="int32") + 3  # 4, 5
    np.testing.assert_array_equal(Tensor(w)[computed].numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(Tensor(w)[Tensor(np.array([3, -4]), dtype="int32")].numpy(),
                                  w[[3, -4]])
    # Data with no negative entry is taken as it is; a computed index is wrapped as it runs.
    np.testing.assert_array_equal(Tensor(w)[Tensor(np.array([3, 0, 3]), dtype="int32")].numpy(),
                                  w[[3, 0, 3]])
    np.testing.assert_array_equal(Tensor(w)[Tensor(np.array([1, 2]), dtype="int32") - 3].numpy(),
                                  w[[-2, -1]])


def test_input_indices_are_not_read_while_capturing():
    """A TinyJit step looking up an embedding: its token ids are not read while it is captured
    (nothing can be), and each run uses the ids it is given."""
    e = nn.Embedding(6, 2)
    step = TinyJit(lambda ids: e(ids).sum(axis=1).realize())
    for ids in ([0, 5, 2], [1, 1, 4], [3, 0, 0], [5, 4, 3]):
        got = step(Tensor(np.array(ids), dtype="int32"))
        np.testing.assert_allclose(got.numpy(), e.weight.numpy()[ids].sum(axis=1), rtol=1e-6)
