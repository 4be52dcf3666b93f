"""Placement with a plugin's device as the default: the core tests' plugin (device 'testdev',
built with the C++ tests; run_tests.sh passes its path in POLYGRAD_TEST_PLUGIN) is loaded and
made the default. A tensor created on or moved to cpu computes on cpu; scalars and host data
(lists, arrays) follow the tensor they meet, as do an optimizer's state and learning rate.
"Nothing ran on testdev" is shown by realising while the plugin fails every render, load,
launch and allocation (POLYGRAD_TEST_HOST_FAULT)."""
import os

import numpy as np
import pytest
import torch

from polygrad import Device, Tensor, nn

PLUGIN = os.environ.get("POLYGRAD_TEST_PLUGIN", "")
pytestmark = [pytest.mark.skipif(
    not os.path.isfile(PLUGIN),
    reason="POLYGRAD_TEST_PLUGIN does not name the built polygrad_test_host.so (run_tests.sh "
           "sets it from the build directory)"), pytest.mark.needs_cpu]

NO_TESTDEV_WORK = "render,load,launch,alloc"


@pytest.fixture
def testdev_default(monkeypatch):
    assert Device.load(PLUGIN) == "test_host"
    monkeypatch.setenv("POLYGRAD_DEVICE", "testdev")
    assert Device.DEFAULT == "TESTDEV"
    return monkeypatch


def test_moved_to_cpu_computes_on_cpu(testdev_default):
    a = Tensor([1.5, -2.0, 3.0])
    assert a.device == "TESTDEV"
    b = Tensor(a).to("cpu").mul(2)  # the case
    assert b.device == "CPU"
    np.testing.assert_array_equal(b.numpy(), [3.0, -4.0, 6.0])
    c = a.to("cpu") * 4
    testdev_default.setenv("POLYGRAD_TEST_HOST_FAULT", NO_TESTDEV_WORK)
    c.realize()
    testdev_default.delenv("POLYGRAD_TEST_HOST_FAULT")
    np.testing.assert_array_equal(c.numpy(), [6.0, -8.0, 12.0])


def test_scalars_and_host_data_follow_the_tensor(testdev_default):
    xs = np.array([-1.0, 0.5, 2.0], dtype=np.float32)
    x = Tensor(xs, device="cpu")
    cases = [
        (x * 2, xs * 2),
        (2 - x, 2 - xs),
        (x + [1.0, 2.0, 3.0], xs + [1.0, 2.0, 3.0]),
        (x[[2, 0]], xs[[2, 0]]),
        (x.where([7.0, 8.0, 9.0], 0.0), np.array([7.0, 8.0, 9.0])),
        ((x > 0).where(x, 10.0), np.where(xs > 0, xs, 10.0)),
        (x @ [1.0, 1.0, 1.0], np.array(xs.sum())),
        (x.lerp([1.0, 1.0, 1.0], 0.5), (xs + 1) / 2),
    ]
    testdev_default.setenv("POLYGRAD_TEST_HOST_FAULT", NO_TESTDEV_WORK)
    for got, _ in cases:
        assert got.device == "CPU"
        got.realize()
    testdev_default.delenv("POLYGRAD_TEST_HOST_FAULT")
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_two_devices_in_one_op_is_an_error_naming_both(testdev_default):
    c, t = Tensor([1.0, 2.0], device="cpu"), Tensor([3.0, 4.0])
    with pytest.raises(ValueError, match=r"add: tensors on different devices \(cpu:0 and "
                                         r"testdev:0\)"):
        c + t
    with pytest.raises(ValueError, match=r"mul: .*testdev:0 and testdev:1"):
        t * Tensor([1.0, 1.0], device="testdev:1")
    np.testing.assert_array_equal((c + t.to("cpu")).numpy(), [4.0, 6.0])


def test_graph_across_devices(testdev_default):
    x = Tensor([1.0, 2.0, 3.0], device="cpu")
    y = x.to("testdev") * 2
    z = y.to("cpu") + x
    assert (y.device, z.device) == ("TESTDEV", "CPU")
    np.testing.assert_array_equal(z.numpy(), [3.0, 6.0, 9.0])
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_optimizer_state_lives_with_its_parameters(testdev_default, name):
    w0 = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    kw = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
    w = Tensor(w0.copy(), device="cpu", requires_grad=True)
    opt = getattr(nn, name)([w], **kw)
    tw = torch.tensor(w0.copy(), requires_grad=True)
    topt = getattr(torch.optim, name)([tw], **kw)
    for _ in range(2):
        opt.zero_grad()
        (w * w * Tensor([1.0, 2.0, 3.0], device="cpu")).sum().backward()
        testdev_default.setenv("POLYGRAD_TEST_HOST_FAULT", NO_TESTDEV_WORK)
        opt.step()
        testdev_default.delenv("POLYGRAD_TEST_HOST_FAULT")
        topt.zero_grad()
        (tw * tw * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        topt.step()
    assert w.device == "CPU"
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
