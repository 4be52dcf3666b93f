"""The cuda device where a GPU is present (skipped elsewhere): transfers both ways and
between devices, out of memory as an error the process survives, kernels named in the load
report's device list. The whole suite also runs on cuda with POLYGRAD_DEVICE=cuda
(scripts/gpu-check.sh); compile-only checks of the plugin run everywhere (tests/cuda)."""
import numpy as np
import pytest

from polygrad import Device, Tensor
from polygrad._ffi import PolygradDeviceError

pytestmark = pytest.mark.skipif(not Device.cuda_available(),
                                reason="no CUDA device (Device.cuda_available() is False)")


def test_to_cuda_and_back_keeps_values():
    x = np.arange(1000, dtype=np.float32).reshape(10, 100) / 7
    t = Tensor(x).cuda()
    assert t.device == "CUDA"
    np.testing.assert_array_equal(t.numpy(), x)
    y = (t * 2 + 1).to(Device.list()[-1] if len(Device.list()) > 1 else "cuda")
    np.testing.assert_allclose(y.numpy(), x * 2 + 1, rtol=1e-6)


def test_every_other_device_round_trips_through_cuda():
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    for name in Device.list():
        if name.startswith("cuda"):
            continue
        on_other = Tensor(x, device=name)
        back = (on_other.to("cuda").exp() - 1).to(name)
        np.testing.assert_allclose(back.numpy(), np.exp(x) - 1, rtol=1e-5, atol=1e-6)


def test_out_of_memory_is_an_error_naming_the_size_and_the_device_stays_usable():
    chunk = 4 << 30  # float32s in 16 GiB: allocated until the GPU has no room for another
    held, error = [], None
    for _ in range(64):
        try:
            held.append(Tensor.zeros(chunk, device="cuda").realize())
        except PolygradDeviceError as e:
            error = str(e)
            break
    assert error is not None, "64 x 16 GiB fit on the GPU"
    assert "out of memory allocating 17179869184 bytes" in error, error
    assert "free of" in error, error
    assert held[0][:4].numpy().tolist() == [0, 0, 0, 0]  # what was there is intact
    held.clear()
    x = Tensor(np.ones(64, np.float32), device="cuda")
    assert (x + 1).sum().item() == 128.0


def test_half_and_bfloat_products_use_the_tensor_cores_and_match_float():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 128)).astype(np.float32)
    b = rng.standard_normal((128, 192)).astype(np.float32)
    for dtype in ("float16", "bfloat16"):
        x = Tensor(a, device="cuda").cast(dtype)
        y = Tensor(b, device="cuda").cast(dtype)
        ref = x.float().numpy() @ y.float().numpy()
        got = (x @ y).float().numpy()
        tol = 2e-2 if dtype == "float16" else 1e-1
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())
