"""Every candidate shape that bench/gpu_shapes.sh times on a GPU (POLYGRAD_GPU_TILE for the
float tile form, POLYGRAD_GPU_WMMA for the tensor-core form) computes the product right: each
in a process of its own on the GPU emulator, against numpy's float64 product of the same
rounded inputs, at sizes that are not multiples of any tile, with the launch the shape gives.
Likewise every candidate count of threads per row (POLYGRAD_GPU_ROW_THREADS) for a softmax.
Where the cuda plugin is installed, each product kernel is also built for sm_90 (its compile
role, no GPU needed), so a candidate that NVRTC or nvJitLink rejects fails here."""
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from polygrad import Device

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def candidates(var):
    """The candidates of the script's list for `var` (GPU_SHAPES_TILE, _WMMA or _ROW)."""
    text = open(os.path.join(ROOT, "bench", "gpu_shapes.sh")).read()
    found = re.search(var + r':-([^}"]*)', text)
    assert found, f"bench/gpu_shapes.sh has no default list for {var}"
    return [s for s in found.group(1).split() if s != "default"]


def child(var, value, code, *args):
    """stdout and stderr of `code` run with `args` on the emulator, `var` set to `value`,
    POLYGRAD_DEBUG=1 (a line per kernel run), and where the cuda plugin is installed each
    kernel also built for sm_90."""
    env = dict(os.environ, **{var: value, "POLYGRAD_DEBUG": "1"})
    env.pop("POLYGRAD_CROSS_COMPILE_DIR", None)
    env.pop("POLYGRAD_CROSS_COMPILE", None)
    if "polygrad_cuda.so" in Device.report():
        env["POLYGRAD_CROSS_COMPILE"] = "cuda:sm_90"
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    return out.stdout, out.stderr.decode()


def launches(stderr, prefix):
    """(groups, threads a group) of each kernel run whose name starts with `prefix`."""
    return [tuple(int(v) for v in m) for m in re.findall(
        r"polygrad: " + prefix + r"\S* +emu:0 +global \[(\d+), 1, 1\] local \[(\d+), 1, 1\]",
        stderr)]


def run_child(var, shape, dtype, m, k, n):
    """(a, b, a @ b) from a process on the emulator with `var` set to `shape`, and the product
    kernel's launch: (groups, threads a group)."""
    code = (
        "import sys, numpy as np\n"
        "from polygrad import Tensor\n"
        "dt, m, k, n = sys.argv[1], *(int(v) for v in sys.argv[2:5])\n"
        "rng = np.random.default_rng(7)\n"
        "a = Tensor(rng.standard_normal((m, k), dtype=np.float32), device='emu').cast(dt)\n"
        "b = Tensor(rng.standard_normal((k, n), dtype=np.float32), device='emu').cast(dt)\n"
        "c = (a @ b).cast('float32').numpy()\n"
        "f32 = lambda t: t.cast('float32').numpy()\n"
        "np.savez(sys.stdout.buffer, a=f32(a), b=f32(b), c=c)\n")
    stdout, stderr = child(var, shape, code, dtype, str(m), str(k), str(n))
    z = np.load(io.BytesIO(stdout))
    products = launches(stderr, "r_")
    assert len(products) == 1, stderr[-2000:]
    return z["a"], z["b"], z["c"], products[0]


def groups(m, n, tile_m, tile_n):
    return -(-m // tile_m) * -(-n // tile_n)


@pytest.mark.parametrize("shape", candidates("GPU_SHAPES_TILE"))
def test_tile_shape_computes_the_product(shape):
    tm, tn, _, rm, rn = (int(v) for v in shape.split(","))
    m, k, n = 130, 40, 136
    a, b, c, launch = run_child("POLYGRAD_GPU_TILE", shape, "float32", m, k, n)
    assert launch == (groups(m, n, tm, tn), (tm // rm) * (tn // rn))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", candidates("GPU_SHAPES_WMMA"))
def test_tensor_core_shape_computes_the_product(shape, dtype):
    wm, wn, fm, fn, ks = (int(v) for v in shape.split(","))
    m, k, n = 260, 72, 136  # (m16n8k16 tiles: a warp's rows fm * 16, its columns fn * 8)
    a, b, c, launch = run_child("POLYGRAD_GPU_WMMA", shape, dtype, m, k, n)
    assert launch == (groups(m, n, wm * fm * 16, wn * fn * 8), wm * wn * 32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # The product is rounded to the half dtype once (its output), from float32 sums.
    rel = np.abs(c - want).max() / np.abs(want).max()
    assert rel < (2e-3 if dtype == "float16" else 1e-2), rel


@pytest.mark.parametrize("threads", candidates("GPU_SHAPES_ROW"))
def test_row_threads_compute_a_softmax(threads):
    code = (
        "import sys, numpy as np\n"
        "from polygrad import Tensor\n"
        "x = np.random.default_rng(3).standard_normal((6, 768), dtype=np.float32)\n"
        "np.save(sys.stdout.buffer, Tensor(x, device='emu').softmax(-1).numpy())\n")
    stdout, stderr = child("POLYGRAD_GPU_ROW_THREADS", threads, code)
    got = np.load(io.BytesIO(stdout))
    x = np.random.default_rng(3).standard_normal((6, 768), dtype=np.float32).astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)
    # Each of the softmax's row kernels: a group per row, min(threads, 512) threads (the
    # largest power of two in 768).
    rows = launches(stderr, "r_")
    assert rows and all(r == (6, min(int(threads), 512)) for r in rows), stderr[-2000:]


@pytest.mark.parametrize("var, value", [("POLYGRAD_GPU_TILE", "64,64,16,4"),
                                        ("POLYGRAD_GPU_WMMA", "2,2,x,4,1"),
                                        ("POLYGRAD_GPU_ROW_THREADS", "48")])
def test_a_malformed_value_is_an_error_naming_the_variable(var, value):
    code = (
        "import numpy as np\n"
        "from polygrad import Tensor\n"
        "a = Tensor(np.ones((256, 256), np.float32), device='emu')\n"
        "h = a.cast('float16')\n"
        "try:\n"
        "    (a @ a).numpy(), (h @ h).numpy(), a.softmax(-1).numpy()  # tile, tensor core, row\n"
        "except ValueError as e:\n"
        "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **{var: value}),
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert f"{var}" in out.stdout.decode() and value in out.stdout.decode(), out.stdout.decode()
