"""POLYGRAD_TIMING=1 prints each phase's total and count at exit; POLYGRAD_LOG=debug adds the
cpu_clang plugin's steps for each kernel it loads (bench/first_call.py reads both). The
variables are read by the library, so each case runs a process of its own, over a kernel cache
(and lowered-program cache) of its own."""
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.needs_cpu

# An elementwise kernel and a fused exp-sum reduce: two compiled, each launched twice.
SCRIPT = """
import numpy as np
from polygrad import Tensor, compiled_kernel_count
a = np.arange(12, dtype=np.float32).reshape(3, 4)
x = Tensor(a)
for _ in range(2):
    np.testing.assert_allclose((x * 3).numpy(), a * 3)
    np.testing.assert_allclose((x - 1).exp().sum(1).numpy(), np.exp(a - 1).sum(1), rtol=1e-5)
print("compiled", compiled_kernel_count())
"""

PHASE = re.compile(r"^polygrad: time (\w+)\s+([\d.]+) ms\s+(\d+) calls$", re.M)


def run(tmp_path, **env):
    config = tmp_path / "polygrad.yaml"
    config.write_text(f"devices:\n  cpu:\n    cache_dir: {tmp_path / 'cache'}\n")
    env = dict(os.environ, POLYGRAD_DEVICE="cpu", POLYGRAD_CONFIG=str(config),
               POLYGRAD_PROGRAM_CACHE=str(tmp_path / "programs"), **env)
    for key in ("POLYGRAD_TIMING", "POLYGRAD_LOG"):
        if key not in env or env[key] is None:
            env.pop(key, None)
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    compiled = int(re.search(r"compiled (\d+)", r.stdout)[1])
    return r.stderr, compiled


def test_phases_are_counted(tmp_path):
    stderr, compiled = run(tmp_path, POLYGRAD_TIMING="1", POLYGRAD_LOG=None)
    phases = {m[0]: (float(m[1]), int(m[2])) for m in PHASE.findall(stderr)}
    assert compiled == 2
    # Discovery once, every kernel compiled rendered and loaded once (built side by side: the
    # cpu loader declares concurrent loads); each realize schedules (four realizes, two of them
    # schedule-cache hits, still timed), launches at least its kernels and copies the result out.
    assert phases["discover"][1] == 1
    assert phases["device_open"][1] == 1
    assert phases["render"][1] == compiled
    assert phases["build"][1] == compiled
    assert "load" not in phases
    assert phases["lower"][1] >= compiled
    assert phases["schedule"][1] == 4
    assert phases["copy_out"][1] == 4
    assert phases["launch"][1] >= 2 * compiled
    assert all(ms >= 0 for ms, _ in phases.values())
    assert phases["discover"][0] >= phases["plugin_open"][0] + phases["plugin_init"][0]


def test_plugin_steps_per_kernel(tmp_path):
    stderr, compiled = run(tmp_path, POLYGRAD_TIMING=None, POLYGRAD_LOG="debug")
    assert not PHASE.search(stderr), "no phase totals without POLYGRAD_TIMING"
    steps = re.findall(r"cpu_clang: kernel '(\w+)': (cache miss|compiled|cache write|linked) in "
                       r"[\d.]+ ms", stderr)
    for step in ("cache miss", "compiled", "cache write", "linked"):
        assert len([k for k, s in steps if s == step]) == compiled, (step, stderr)
    # The same program again: every kernel is a cache hit, nothing compiles.
    stderr, compiled = run(tmp_path, POLYGRAD_TIMING=None, POLYGRAD_LOG="debug")
    assert len(re.findall(r"': cache hit in [\d.]+ ms", stderr)) == compiled
    assert "': compiled in" not in stderr
