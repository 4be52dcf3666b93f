"""Devices, library discovery and errors carrying the core's messages."""
import os

import numpy as np
import pytest

import polygrad
from polygrad import Device, PolygradDeviceError, PolygradError, PolygradValueError, Tensor


@pytest.mark.needs_cpu
def test_device_list_and_default():
    devices = Device.list()
    assert "cpu:0" in devices
    # (CI runs the suite a second time with POLYGRAD_DEVICE=emu)
    want = Device.canonical(os.environ.get("POLYGRAD_DEVICE", "cpu"))
    assert Device.DEFAULT == polygrad.device.device_display(want)
    assert Device.canonical("cpu") == "cpu:0" and Device.canonical("CPU") == "cpu:0"
    assert Device.cuda_available() == any(d.startswith("cuda") for d in devices)
    assert Tensor.rand(2, device="cpu").device == "CPU"
    assert Tensor([1.0], device="CPU:0").device == "CPU"


@pytest.mark.needs_cpu
def test_load_and_report():
    assert Device.load("cpu_clang") == "cpu_clang"
    report = Device.report()
    assert "loaded" in report and "polygrad_cpu_clang.so" in report
    assert '"records"' in Device.report(json=True)
    with pytest.raises(PolygradValueError, match="no plugin named 'no_such_plugin'"):
        Device.load("no_such_plugin")


def test_load_failure_carries_reason(tmp_path):
    bad = tmp_path / "polygrad_broken.so"
    bad.write_bytes(b"not an elf file")
    with pytest.raises(PolygradDeviceError, match="refused .*polygrad_broken.so.* at open"):
        Device.load(str(bad))


def test_errors_carry_core_messages():
    with pytest.raises(PolygradValueError, match=r"reshape.*\(2, 3\).*\(4,\)"):
        Tensor.rand(2, 3).reshape(4)
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\)"):
        Tensor.rand(2, 3) + Tensor.rand(4, 5)
    with pytest.raises(PolygradError, match="matmul"):
        Tensor.rand(2, 3) @ Tensor.rand(4, 5)
    with pytest.raises(PolygradValueError, match="unknown device 'tpu'"):
        Tensor.rand(2, device="tpu")
    with pytest.raises(PolygradValueError, match="axis"):
        Tensor.rand(2, 3).sum(5)
    with pytest.raises(PolygradValueError, match="backward.*no tensor that requires grad"):
        Tensor([1.0, 2.0]).sum().backward()
    w = Tensor([2.0, -1.0], requires_grad=True)
    loss = (w * w).sum()
    assert loss.item() == 5.0  # reading a loss first keeps its graph in Python
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, -2.0])


def test_library_found_without_environment():
    # Installed with pip: the copy inside the package; from the source tree: the build tree.
    if "POLYGRAD_LIB" in os.environ:
        pytest.skip("POLYGRAD_LIB overrides discovery")
    pkg = os.path.dirname(polygrad.__file__)
    if "site-packages" in pkg:
        assert polygrad.LIB_PATH == os.path.join(pkg, "_lib", "libpolygrad.so")
        assert os.path.isfile(os.path.join(pkg, "_lib", "polygrad", "plugins",
                                           "polygrad_cpu_clang.so"))
        assert "_lib/polygrad/plugins/polygrad_cpu_clang.so" in Device.report()
