"""nn layers against their torch counterparts, from the same weights."""
import numpy as np
import pytest
import torch

from helpers import inputs
from polygrad import Tensor
from polygrad import nn


def _copy(ours, theirs):
    """Copies our parameters into the torch module (same names)."""
    with torch.no_grad():
        for name, t in nn.get_state_dict(ours).items():
            getattr(theirs, name).copy_(torch.tensor(t.numpy()))


def _check(ours, theirs, x, atol=1e-4, names=("weight", "bias")):
    _copy(ours, theirs)
    xp, xt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yp, yt = ours(xp), theirs(xt)
    u = np.random.default_rng(7).uniform(0.5, 1.5, tuple(yt.shape)).astype(np.float32)
    (yp * Tensor(u)).sum().backward()
    (yt * torch.tensor(u)).sum().backward()
    np.testing.assert_allclose(yp.numpy(), yt.detach().numpy(), atol=atol, rtol=1e-4)
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), atol=atol * 10, rtol=1e-3)
    for n in names:
        p = getattr(ours, n, None)
        if p is not None:
            np.testing.assert_allclose(p.grad.numpy(), getattr(theirs, n).grad.numpy(),
                                       atol=atol * 10, rtol=1e-3, err_msg=n)


def test_linear():
    _check(nn.Linear(4, 3), torch.nn.Linear(4, 3), inputs([(5, 4)])[0])
    _check(nn.Linear(4, 3, bias=False), torch.nn.Linear(4, 3, bias=False), inputs([(2, 4)])[0])
    w = nn.Linear(100, 10).weight.numpy()
    assert np.abs(w).max() <= 0.1 and w.std() > 0.03  # uniform(+-1/sqrt(100))


def test_layernorm_rmsnorm_groupnorm():
    _check(nn.LayerNorm(6), torch.nn.LayerNorm(6), inputs([(3, 6)])[0])
    _check(nn.LayerNorm((2, 3)), torch.nn.LayerNorm((2, 3)), inputs([(4, 2, 3)])[0])
    x = inputs([(3, 8)])[0]
    r = nn.RMSNorm(8)
    r.weight = Tensor(np.linspace(0.5, 1.5, 8).astype(np.float32), requires_grad=True)
    xp = Tensor(x, requires_grad=True)
    y = r(xp)
    y.sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(r.weight.numpy(), requires_grad=True)
    yt = xt * torch.rsqrt(xt.square().mean(-1, keepdim=True) + 1e-5) * wt
    yt.sum().backward()
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(xp.grad.numpy(), xt.grad.numpy(), atol=1e-4)
    np.testing.assert_allclose(r.weight.grad.numpy(), wt.grad.numpy(), atol=1e-4)
    _check(nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4), inputs([(2, 4, 3, 3)])[0])


def test_embedding():
    e, et = nn.Embedding(10, 4), torch.nn.Embedding(10, 4)
    _copy(e, et)
    idx = np.array([[1, 3, 3], [9, 0, 1]])
    y, yt = e(Tensor(idx, dtype="int32")), et(torch.tensor(idx))
    y.sum().backward()  # before reading y: realising a tensor ends its graph
    yt.sum().backward()
    np.testing.assert_allclose(y.numpy(), yt.detach().numpy())
    np.testing.assert_allclose(e.weight.grad.numpy(), et.weight.grad.numpy())


def test_dropout_of_one_is_zeros_and_groupnorm_checks_its_groups():
    Tensor.training = True
    try:
        np.testing.assert_array_equal(Tensor([1.0, 2.0]).dropout(1.0).numpy(), [0.0, 0.0])
    finally:
        Tensor.training = False
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


def test_dropout_probability_outside_zero_to_one_raises():
    # torch raises for p outside [0, 1], in training or not
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            Tensor([1.0, 2.0]).dropout(p)


def test_dropout_honours_training():
    d = nn.Dropout(0.5)
    x = Tensor.ones(2000)
    assert Tensor.training is False
    np.testing.assert_array_equal(d(x).numpy(), np.ones(2000))
    Tensor.training = True
    try:
        y = d(x).numpy()
    finally:
        Tensor.training = False
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6
    with Tensor.train():
        assert Tensor.training
        assert (d(x).numpy() == 0).any()
    assert not Tensor.training


def test_conv2d():
    _check(nn.Conv2d(3, 4, 3), torch.nn.Conv2d(3, 4, 3), inputs([(2, 3, 6, 6)])[0])
    _check(nn.Conv2d(2, 4, (3, 3), stride=2, padding=1, bias=False),
           torch.nn.Conv2d(2, 4, 3, stride=2, padding=1, bias=False), inputs([(1, 2, 7, 7)])[0])


def test_batchnorm2d_training_and_eval():
    bn, bt = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    x = inputs([(4, 3, 5, 5)])[0]
    Tensor.training = True
    try:
        bt.train()
        _check(bn, bt, x)
        np.testing.assert_allclose(bn.running_mean.numpy(), bt.running_mean.numpy(), atol=1e-5)
        np.testing.assert_allclose(bn.running_var.numpy(), bt.running_var.numpy(), atol=1e-5)
    finally:
        Tensor.training = False
    bt.eval()
    x2 = inputs([(2, 3, 4, 4)], seed=3)[0]
    np.testing.assert_allclose(bn(Tensor(x2)).numpy(), bt(torch.tensor(x2)).detach().numpy(),
                               atol=1e-5)


def test_batchnorm2d_statistics_follow_training_steps():
    # The running statistics are realised with each optimizer step (not during the forward
    # pass); three steps of conv -> batch norm -> SGD, then a forward with no step, against torch.
    conv, bn = nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3)
    tconv, tbn = torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3)
    _copy(conv, tconv)
    params = [conv.weight, conv.bias, bn.weight, bn.bias]
    opt = nn.SGD(params, lr=0.1)
    topt = torch.optim.SGD(list(tconv.parameters()) + list(tbn.parameters()), lr=0.1)
    Tensor.training = True
    try:
        for step in range(4):
            x = inputs([(4, 2, 5, 5)], seed=10 + step)[0]
            y, ty = bn(conv(Tensor(x))), tbn(tconv(torch.tensor(x)))
            if step == 3:
                break  # a forward with no optimizer step after it
            opt.zero_grad()
            topt.zero_grad()
            (y * y).mean().backward()
            (ty * ty).mean().backward()
            opt.step()
            topt.step()
        np.testing.assert_allclose(bn.running_mean.numpy(), tbn.running_mean.numpy(), atol=1e-5)
        np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), atol=1e-5)
        assert int(bn.num_batches_tracked.numpy()) == 4
        np.testing.assert_allclose(conv.weight.numpy(), tconv.weight.detach().numpy(), atol=1e-5)
    finally:
        Tensor.training = False


def test_state_dict_names_and_load():
    class Net:
        def __init__(self):
            self.l1 = nn.Linear(3, 4)
            self.layers = [nn.Linear(4, 4), nn.LayerNorm(4)]
            self.bn = nn.BatchNorm2d(2)

    a, b = Net(), Net()
    sd = nn.get_state_dict(a)
    assert set(sd) == {"l1.weight", "l1.bias", "layers.0.weight", "layers.0.bias",
                       "layers.1.weight", "layers.1.bias", "bn.weight", "bn.bias",
                       "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}
    assert len(nn.get_parameters(a)) == 11
    nn.load_state_dict(b, sd)
    for k, v in nn.get_state_dict(b).items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy(), err_msg=k)
    bad = dict(sd)
    bad["l1.weight"] = Tensor.zeros(2, 2)
    with pytest.raises(ValueError, match="l1.weight"):
        nn.load_state_dict(b, bad)
    del bad["l1.weight"]
    with pytest.raises(KeyError, match="l1.weight"):
        nn.load_state_dict(b, bad)


def test_safetensors_roundtrip(tmp_path):
    import json
    import struct
    tensors = {"w": Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
               "i": Tensor(np.array([1, -2, 3], np.int64)),
               "h": Tensor(np.array([0.5, 1.5], np.float16))}
    path = str(tmp_path / "m.safetensors")
    nn.safe_save(tensors, path, metadata={"format": "pt"})
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert header["w"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["i"]["dtype"] == "I64" and header["__metadata__"] == {"format": "pt"}
    np.testing.assert_array_equal(np.frombuffer(raw[8 + n:8 + n + 24], "<f4"), np.arange(6))
    back = nn.safe_load(path)
    assert set(back) == set(tensors)
    for k in tensors:
        assert back[k].dtype == tensors[k].dtype
        np.testing.assert_array_equal(back[k].numpy(), tensors[k].numpy())
    m = nn.Linear(3, 2)
    nn.safe_save(nn.get_state_dict(m), path)
    m2 = nn.Linear(3, 2)
    nn.load_state_dict(m2, nn.safe_load(path))
    np.testing.assert_array_equal(m2.weight.numpy(), m.weight.numpy())
    # a BatchNorm2d's num_batches_tracked is a 0-d tensor and comes back 0-d
    bn = nn.BatchNorm2d(2)
    nn.safe_save(nn.get_state_dict(bn), path)
    back = nn.safe_load(path)
    assert back["num_batches_tracked"].shape == ()
    nn.load_state_dict(nn.BatchNorm2d(2), back)
