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


@pytest.mark.parametrize("arg", [(), []])
def test_pad_of_no_pairs_is_the_tensor(arg):
    # torch's F.pad(x, ()) gives x back (an empty flat form); it raised "0 pad pairs".
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(Tensor(a).pad(arg).numpy(), F.pad(torch.tensor(a), arg).numpy())
    assert Tensor(a).pad(arg).shape == (2, 3)
    assert Tensor(2.5).pad(arg).numpy() == 2.5


@pytest.mark.parametrize("op,kw", [
    ("avg_pool2d", {"kernel_size": (2, 2, 2)}),
    ("avg_pool2d", {"kernel_size": (2,)}),
    ("max_pool2d", {"kernel_size": 2, "stride": (1, 1, 1)}),
    ("max_pool2d", {"kernel_size": 2, "padding": (1,)}),
    ("max_pool2d", {"kernel_size": 2, "dilation": (1, 2, 3)}),
])
def test_pool_sizes_must_be_an_int_or_a_pair(op, kw):
    """The C entries read two values: a 3-tuple was cut to its first two, a 1-tuple read
    past its end."""
    with pytest.raises(ValueError, match=op):
        getattr(Tensor.ones(1, 1, 6, 6), op)(**kw).numpy()


@pytest.mark.parametrize("kw", [{"stride": (1, 1, 1)}, {"padding": (1, 1, 1, 1)},
                                {"dilation": (2,)}])
def test_conv2d_sizes_must_be_an_int_or_a_pair(kw):
    with pytest.raises(ValueError, match="conv2d"):
        Tensor.ones(1, 1, 6, 6).conv2d(Tensor.ones(1, 1, 3, 3), **kw).numpy()


def test_pool_and_conv_pairs_match_torch():
    a = np.arange(2 * 7 * 6, dtype=np.float64).reshape(1, 2, 7, 6)
    x, ta = Tensor(a), torch.tensor(a)
    np.testing.assert_allclose(x.max_pool2d((3, 2), stride=(2, 1), padding=(1, 0)).numpy(),
                               F.max_pool2d(ta, (3, 2), (2, 1), (1, 0)).numpy())
    np.testing.assert_allclose(x.avg_pool2d(3, stride=(1, 2), padding=(0, 1)).numpy(),
                               F.avg_pool2d(ta, 3, (1, 2), (0, 1)).numpy())
    w = np.arange(2 * 2 * 3 * 2, dtype=np.float64).reshape(2, 2, 3, 2) / 10
    np.testing.assert_allclose(
        x.conv2d(Tensor(w), stride=(2, 1), dilation=(1, 2), padding=(1, 0)).numpy(),
        F.conv2d(ta, torch.tensor(w), stride=(2, 1), dilation=(1, 2), padding=(1, 0)).numpy())


def test_where_of_two_bool_scalars_stays_bool():
    """where(c, True, False) gave int32 (the C API's scalars are ints or floats)."""
    c = np.array([True, False, True])
    expected = torch.where(torch.tensor(c), True, False)
    out = Tensor(c).where(True, False)
    assert out.dtype == "bool" and expected.dtype == torch.bool
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    out = Tensor(c).where(np.bool_(False), True)
    assert out.dtype == "bool"
    np.testing.assert_array_equal(out.numpy(), ~c)
    # a bool with an int or a float still promotes (int32: the default int)
    assert Tensor(c).where(True, 2).dtype == "int32"
    assert Tensor(c).where(False, 2.5).dtype == "float32"


@pytest.mark.needs_cpu
def test_like_constructors_take_dtype_and_device():
    """zeros_like, ones_like, full_like, rand_like and randn_like take tinygrad's and torch's
    dtype= and device= keywords (they took none)."""
    x = Tensor(np.array([[1, 2, 3]], np.int16))
    tx = torch.tensor([[1, 2, 3]], dtype=torch.int16)
    for name, args in (("zeros_like", ()), ("ones_like", ()), ("full_like", (2.75,))):
        for dt in ("float64", "int32", "bool"):
            out = getattr(x, name)(*args, dtype=dt, device="cpu")
            ref = getattr(torch, name)(tx, *args, dtype=getattr(torch, dt))
            assert out.dtype == dt and out.shape == (1, 3) and out.device == "CPU"
            np.testing.assert_array_equal(out.numpy(), ref.numpy())
        assert getattr(x, name)(*args).dtype == "int16"
    assert x.full_like(7, requires_grad=None).dtype == "int16"
    f = Tensor.ones(2, 3)
    for name in ("rand_like", "randn_like"):
        out = getattr(f, name)(dtype="float64")
        assert out.dtype == "float64" and out.shape == (2, 3)
        assert getattr(f, name)().dtype == "float32"
    assert f.zeros_like(requires_grad=True).requires_grad


B = 2**64  # ctypes keeps the low 64 bits of a larger int: B + 6 was read as 6, B as 0


@pytest.mark.parametrize("name,f", [
    ("reshape", lambda t: t.reshape(B + 6)),
    ("sum", lambda t: t.sum(B)),
    ("transpose", lambda t: t.reshape(2, 3).transpose(B, 1)),
    ("argmax", lambda t: t.argmax(B)),
    ("squeeze", lambda t: t.reshape(1, 6).squeeze(B)),
    ("softmax", lambda t: t.softmax(B)),
    ("cumsum", lambda t: t.cumsum(B)),
    ("tril", lambda t: t.reshape(2, 3).tril(B)),
    ("pad", lambda t: t.pad((B, 0))),
    ("repeat", lambda t: t.repeat(B + 1)),
    ("split", lambda t: t.split(B + 2)),
    ("roll", lambda t: t.roll(B + 1)),
    ("zeros", lambda t: Tensor.zeros(B + 2)),
    ("eye", lambda t: Tensor.eye(B + 2)),
    ("one_hot", lambda t: Tensor([1]).one_hot(B + 3)),
    ("randint", lambda t: Tensor.randint(0, B + 5, (2,), dtype="int64")),
])
def test_int_arguments_beyond_int64_are_errors(name, f):
    """Every one of these computed a result from the wrapped value instead."""
    with pytest.raises(ValueError, match="int64"):
        f(Tensor(np.arange(6.0)))


def test_int_arguments_at_the_int64_limits_still_pass():
    t = Tensor(np.arange(6.0))
    np.testing.assert_array_equal(t[2**63 - 1:-2**63:-1].numpy(), np.arange(6.0)[::-1])
    np.testing.assert_array_equal(t.reshape(2, 3).tril(2**63 - 1).numpy(),
                                  np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(t.reshape(2, 3).tril(-2**63).numpy(), np.zeros((2, 3)))
