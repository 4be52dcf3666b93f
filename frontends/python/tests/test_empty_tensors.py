"""Tensors with a 0-length axis through shape ops, matmul and elementwise ops, against torch;
no kernel writes past an empty buffer (16 ops corrupted the heap: a kernel was built over the
other axes)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from polygrad import Tensor


@pytest.mark.parametrize("a,b", [((5, 2, 0), (0, 3)), ((2, 1, 4, 0), (1, 0, 3)),
                                 ((3, 2, 0), (3, 0, 4)), ((4, 0), (0, 2))])
def test_matmul_with_an_empty_inner_axis_is_zeros(a, b):
    """(..., n, 0) @ (0, m) is zeros; the batched case flattened to reshape(-1, 0), which
    cannot tell its -1, and raised."""
    x = np.arange(np.prod(a), dtype=np.float64).reshape(a)
    y = np.arange(np.prod(b), dtype=np.float64).reshape(b)
    out = (Tensor(x) @ Tensor(y)).numpy()
    ref = (torch.tensor(x) @ torch.tensor(y)).numpy()
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


def test_conv2d_with_no_input_channels_is_the_bias():
    """A sum over no channels is 0, so the output is the bias (torch 1.13 returns a (2, 0, 2, 2)
    tensor here, dropping the weight's 3 output channels; numpy's einsum agrees with this)."""
    x, w, b = np.ones((2, 0, 4, 4)), np.ones((3, 0, 3, 3)), np.array([1.0, -2.0, 0.5])
    out = Tensor(x).conv2d(Tensor(w), Tensor(b)).numpy()
    ref = np.broadcast_to(b.reshape(1, 3, 1, 1), (2, 3, 2, 2))
    assert out.shape == ref.shape
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("shape,dim,sizes", [((2, 0), 0, (1, -1)), ((0, 3), 1, (-1, 3)),
                                             ((2, 0, 6), 2, (2, -1)), ((4, 0), 0, (-1, 2))])
def test_unflatten_infers_its_size_from_the_axis(shape, dim, sizes):
    """unflatten's -1 is the axis' size over the other sizes; it was reshape's -1 over the
    whole tensor, which is ambiguous when another axis is 0."""
    out = Tensor.zeros(*shape).unflatten(dim, sizes)
    assert out.shape == torch.zeros(shape).unflatten(dim, sizes).shape


def test_unflatten_rejects_two_inferred_sizes():
    with pytest.raises(ValueError, match="unflatten"):
        Tensor.zeros(2, 6).unflatten(1, (-1, -1))


CASES = {
    "exp": lambda x: x.exp(),
    "relu": lambda x: x.relu(),
    "tanh": lambda x: x.tanh(),
    "add": lambda x: x + x,
    "mul_scalar": lambda x: x * 3,
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1),
    "flip": lambda x: x.flip(0),
    "where": lambda x: (x > 0).where(x, x * 2) if isinstance(x, Tensor)
    else torch.where(x > 0, x, x * 2),
    "pow": lambda x: x ** x,
    "sum0": lambda x: x.sum(0),
    "cast": lambda x: x.int(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_ops_match_torch(name):
    a = np.zeros((0, 64), np.float32)
    got = CASES[name](Tensor(a)).numpy()
    want = CASES[name](torch.tensor(a)).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want.astype(got.dtype))


def test_empty_gradient_and_assign():
    p = Tensor(np.zeros((0, 64), np.float32), requires_grad=True)
    w = Tensor(np.ones((64, 8), np.float32))
    (p @ w).tanh().sum().backward()
    assert p.grad.numpy().shape == (0, 64)
    x = Tensor(np.zeros((0, 64), np.float32))
    x.assign(x + 1).realize()
    assert x.numpy().shape == (0, 64)
    assert (Tensor.zeros(0, 64) + 1).numpy().shape == (0, 64)
