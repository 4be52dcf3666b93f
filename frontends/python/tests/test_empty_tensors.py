"""Ops on tensors with a zero-length axis: the same shapes as torch, and no kernel writes past
an empty buffer (16 of these corrupted the heap: a kernel was built over the other axes)."""
import numpy as np
import pytest
import torch

from polygrad import Tensor

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
