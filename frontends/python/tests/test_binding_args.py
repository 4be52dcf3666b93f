"""Arguments the Python binding reads before the C call: a malformed one is a clear error
naming the op, never a value computed from part of it."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from polygrad import Tensor


@pytest.mark.parametrize("arg", [(1, 2, 3), (1,) * 8])
def test_pad_flat_form_must_be_pairs_within_the_rank(arg):
    """An odd flat padding dropped its last entry, and more pairs than axes wrapped round to
    pad the last axis again (Python's negative list index); torch rejects both."""
    t = Tensor.ones(2, 3, 4)
    with pytest.raises(RuntimeError):
        F.pad(torch.ones(2, 3, 4), arg)
    with pytest.raises(ValueError, match="pad"):
        t.pad(arg)


def test_pad_flat_form_full_rank():
    a = np.arange(6.0).reshape(2, 3)
    arg = (1, -1, 2, 0)
    np.testing.assert_array_equal(Tensor(a).pad(arg).numpy(), F.pad(torch.tensor(a), arg).numpy())
