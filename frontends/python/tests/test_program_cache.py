"""The lowered-program disk cache (POLYGRAD_PROGRAM_CACHE, core/runtime/lowered_cache.hpp): a
second process over the same cache gets the same results and lowers nothing; an entry that does
not check out is ignored, lowered again and rewritten. Each case runs processes of their own,
since the cache is read once per kernel per process."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.needs_cpu

# An elementwise kernel, a fused exp-sum reduce and a matmul with relu and sum.
SCRIPT = """
import numpy as np
from polygrad import Tensor, compiled_kernel_count
rng = np.random.default_rng(0)
a = rng.standard_normal((16, 24), dtype=np.float32)
b = rng.standard_normal((24, 8), dtype=np.float32)
x, y = Tensor(a), Tensor(b)
out = [(x * 3).numpy(), (x - 1).exp().sum(1).numpy(), (x @ y).relu().sum().numpy()]
np.save(OUT, np.concatenate([o.ravel() for o in out]))
print("compiled", compiled_kernel_count())
"""

PHASE = re.compile(r"^polygrad: time (\w+)\s+([\d.]+) ms\s+(\d+) calls$", re.M)


def run(tmp_path, name):
    config = tmp_path / "polygrad.yaml"
    config.write_text(f"devices:\n  cpu:\n    cache_dir: {tmp_path / 'objects'}\n")
    out = tmp_path / f"{name}.npy"
    env = dict(os.environ, POLYGRAD_DEVICE="cpu", POLYGRAD_CONFIG=str(config),
               POLYGRAD_PROGRAM_CACHE=str(tmp_path / "programs"), POLYGRAD_TIMING="1")
    env.pop("POLYGRAD_LOG", None)
    # make test's cross-compile tier (POLYGRAD_CROSS_COMPILE) lowers every kernel once more for
    # its other target, outside this cache: the child must not inherit it.
    env.pop("POLYGRAD_CROSS_COMPILE", None)
    env.pop("POLYGRAD_CROSS_COMPILE_DIR", None)
    r = subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + SCRIPT], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    phases = {m[0]: int(m[2]) for m in PHASE.findall(r.stderr)}
    compiled = int(re.search(r"compiled (\d+)", r.stdout)[1])
    return np.load(out), phases.get("lower", 0), compiled, r.stderr


def expected():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 24), dtype=np.float32)
    b = rng.standard_normal((24, 8), dtype=np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return np.concatenate([(a64 * 3).ravel(), np.exp(a64 - 1).sum(1),
                           [np.maximum(a64 @ b64, 0).sum()]])


def entries(tmp_path):
    return sorted((tmp_path / "programs").glob("*.lowered"))


def test_second_process_lowers_nothing(tmp_path):
    first, lowered, compiled, _ = run(tmp_path, "first")
    np.testing.assert_allclose(first, expected(), rtol=1e-4, atol=1e-4)
    assert lowered >= compiled >= 3
    assert len(entries(tmp_path)) == compiled
    second, lowered, compiled2, _ = run(tmp_path, "second")
    assert lowered == 0
    assert compiled2 == compiled
    np.testing.assert_array_equal(second, first)


def test_corrupt_entry_is_ignored_and_rewritten(tmp_path):
    first, _, compiled, _ = run(tmp_path, "first")
    files = entries(tmp_path)
    assert len(files) == compiled
    data = bytearray(files[0].read_bytes())
    data[-1] ^= 0xFF  # the payload's last byte: the checksum no longer matches
    files[0].write_bytes(bytes(data))
    files[1].write_bytes(b"not an entry")
    second, lowered, _, stderr = run(tmp_path, "second")
    np.testing.assert_array_equal(second, first)
    assert lowered == 2, stderr
    third, lowered, _, _ = run(tmp_path, "third")
    assert lowered == 0  # both rewritten
    np.testing.assert_array_equal(third, first)


def test_off_lowers_every_time(tmp_path):
    config = tmp_path / "polygrad.yaml"
    config.write_text(f"devices:\n  cpu:\n    cache_dir: {tmp_path / 'objects'}\n")
    env = dict(os.environ, POLYGRAD_DEVICE="cpu", POLYGRAD_CONFIG=str(config),
               POLYGRAD_PROGRAM_CACHE="off", POLYGRAD_TIMING="1")
    for name in ("a", "b"):
        out = tmp_path / f"{name}.npy"
        r = subprocess.run([sys.executable, "-c", f"OUT = {str(out)!r}\n" + SCRIPT], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        phases = {m[0]: int(m[2]) for m in PHASE.findall(r.stderr)}
        assert phases["lower"] >= int(re.search(r"compiled (\d+)", r.stdout)[1])


def test_directory_is_bounded_oldest_first(tmp_path):
    # 4100 old entries (beyond the 4096 bound): the process's first write removes the oldest
    # down to three quarters of the bound, and keeps what it wrote.
    programs = tmp_path / "programs"
    programs.mkdir(mode=0o700)
    for i in range(4100):
        old = programs / f"{i:064x}.lowered"
        old.write_bytes(b"old")
        os.utime(old, (1_000_000_000 + i, 1_000_000_000 + i))
    first, _, compiled, _ = run(tmp_path, "first")
    left = entries(tmp_path)
    assert len(left) <= 4096 * 3 // 4 + compiled
    assert not (programs / f"{0:064x}.lowered").exists()  # the oldest went first
    assert (programs / f"{4099:064x}.lowered").exists()   # the newest old one stayed
    second, lowered, _, _ = run(tmp_path, "second")
    assert lowered == 0
    np.testing.assert_array_equal(second, first)
