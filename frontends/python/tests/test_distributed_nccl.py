"""polygrad.distributed over the ccl_nccl plugin where NCCL can make communicators (a GPU;
skipped elsewhere, where test_distributed.py checks the reason instead): a world of one on cuda
tensors returns every input, host memory is refused naming the plugin, and with two GPUs two
ranks meet at a TCP store on the loopback and sum their tensors."""
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import polygrad.distributed as dist
from polygrad import Device, Tensor
from polygrad._ffi import PolygradError


def _nccl_line():
    line = [r for r in Device.report().splitlines() if "polygrad_ccl_nccl.so" in r]
    return line[0] if line else ""


pytestmark = pytest.mark.skipif(not _nccl_line().endswith(": usable"),
                                reason="NCCL cannot make communicators here: " +
                                       (_nccl_line() or "the ccl_nccl plugin is not built"))


@pytest.fixture
def world_of_one():
    dist.init(backend="nccl", rank=0, world_size=1, timeout=60)
    yield
    dist.shutdown()


def test_world_of_one_returns_every_input(world_of_one):
    assert dist.transport().startswith("NCCL ")
    x = np.arange(-20, 20, dtype=np.float32).reshape(8, 5) / 3
    t = Tensor(x).cuda()
    for op in ("sum", "max", "mean"):
        np.testing.assert_array_equal(dist.all_reduce(t, op).numpy(), x)
    np.testing.assert_array_equal(dist.broadcast(t, 0).numpy(), x)
    np.testing.assert_array_equal(dist.all_gather(t).numpy(), x[None])
    np.testing.assert_array_equal(dist.reduce_scatter(t).numpy(), x)
    y = Tensor(x * 2).cuda().realize()
    np.testing.assert_array_equal(dist.all_reduce_(y, "sum").numpy(), x * 2)
    ints = Tensor(np.arange(10, dtype=np.int32)).cuda()
    np.testing.assert_array_equal(dist.all_reduce(ints, "max").numpy(), np.arange(10))
    dist.barrier()


@pytest.mark.needs_cpu
def test_host_memory_is_refused_naming_the_plugin(world_of_one):
    with pytest.raises(PolygradError, match="gives no device address|host memory"):
        dist.all_reduce(Tensor(np.ones(4, np.float32), device="cpu"))


_RANK = r"""
import os, numpy as np
import polygrad.distributed as dist
from polygrad import Tensor
dist.init(backend="nccl", timeout=60)
r = dist.rank()
x = Tensor(np.full((1000,), r + 1, np.float32), device="cuda" if r == 0 else f"cuda:{r}")
s = dist.all_reduce(x, "sum").numpy()
assert (s == 3).all(), s[:4]
dist.barrier()
print("rank", r, "ok")
"""


@pytest.mark.skipif(sum(d.startswith("cuda") for d in Device.list()) < 2,
                    reason="two ranks need two GPUs (NCCL refuses two ranks on one)")
def test_two_ranks_meet_at_the_tcp_store():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(2):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, "-c", _RANK], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = [p.communicate(timeout=240)[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0 and f"rank {r} ok" in out, out
