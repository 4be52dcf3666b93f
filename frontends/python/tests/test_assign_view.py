"""Tensor.assign through a view and t[idx] = value: the write goes into the viewed tensor's
buffer at the view's elements, the others untouched. Values against numpy."""
import numpy as np
import pytest

from polygrad import Tensor


def _base(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return a, Tensor(a.copy()).realize()  # (a copy: the tensor may share the array)


@pytest.mark.parametrize("index", [
    (slice(2, 3),),                       # one row
    (slice(1, 4),),                       # rows
    (slice(None), slice(2, 5)),           # columns
    (slice(1, 4), slice(3, 6)),           # a block
    (3,),                                 # an int: a reshaped row
    (slice(None), 4),                     # a column through an int
    (Ellipsis, slice(0, 1)),
])
def test_assign_through_a_slice(index):
    a, t = _base((6, 7))
    view = t[index]
    value = np.random.default_rng(1).standard_normal(view.shape).astype(np.float32)
    view.assign(Tensor(value))
    want = a.copy()
    want[index] = value
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(view.numpy(), value)


@pytest.mark.parametrize("index", [(slice(1, 3),), (slice(None), slice(0, 2)), (2, slice(1, 6)),
                                   (slice(4, 6), 0)])
def test_setitem_matches_numpy(index):
    a, t = _base((6, 7), seed=2)
    t[index] = 5.0  # a scalar broadcasts
    a[index] = 5.0
    np.testing.assert_array_equal(t.numpy(), a)
    value = np.arange(np.empty((6, 7))[index].size, dtype=np.float32).reshape(
        np.empty((6, 7))[index].shape)
    t[index] = Tensor(value)
    a[index] = value
    np.testing.assert_array_equal(t.numpy(), a)


def test_assign_through_a_transpose_and_a_reshape():
    a, t = _base((4, 6), seed=3)
    v = np.random.default_rng(4).standard_normal((6, 4)).astype(np.float32)
    t.T.assign(Tensor(v))
    a = v.T.copy()
    np.testing.assert_array_equal(t.numpy(), a)
    w = np.random.default_rng(5).standard_normal((2, 3)).astype(np.float32)
    t.reshape(8, 3)[2:4].assign(Tensor(w))
    a.reshape(8, 3)[2:4] = w
    np.testing.assert_array_equal(t.numpy(), a)


def test_value_reading_the_target_elsewhere():
    # rows 1..3 take rows 0..2: the value reads the buffer at other positions than it writes
    a, t = _base((5, 4), seed=6)
    t[1:4] = t[0:3] * 2
    a[1:4] = a[0:3] * 2
    np.testing.assert_allclose(t.numpy(), a, rtol=1e-6)


def test_lazy_tensor_is_realised_by_setitem():
    t = Tensor.zeros(4, 3).contiguous() + 1
    t[1] = 7.0
    want = np.ones((4, 3), np.float32)
    want[1] = 7
    np.testing.assert_array_equal(t.numpy(), want)


def test_broadcast_view_is_refused_naming_the_op():
    _, t = _base((1, 4))
    with pytest.raises(Exception, match="EXPAND"):
        t.expand(3, 4).assign(Tensor.ones(3, 4))


def test_padded_view_is_refused_naming_the_op():
    _, t = _base((3, 4))
    with pytest.raises(Exception, match="PAD"):
        t.pad(((1, 1), (0, 0))).assign(Tensor.ones(5, 4))
