"""polygrad.distributed over the ccl_mpi plugin, with two ranks started by mpirun on this
machine (ddp_worker.py): data-parallel training equals one process on the same global batch,
the ranks end with the same weights bit for bit, and a rank that dies or stalls makes the other
fail naming it, within the timeout."""
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import polygrad.distributed as dist
from polygrad import Device, PolygradDeviceError

HERE = os.path.dirname(os.path.abspath(__file__))


def _ccl_mpi_missing():
    if shutil.which("mpirun") is None:
        return "no mpirun (install openmpi-bin)"
    line = [r for r in Device.report().splitlines() if "polygrad_ccl_mpi.so" in r]
    if not line or not line[0].startswith("loaded"):
        return "the ccl_mpi plugin is not loaded: " + (line[0] if line else "not built")
    return ""


pytestmark = pytest.mark.skipif(bool(_ccl_mpi_missing()), reason=_ccl_mpi_missing())


def mpirun(mode, out, timeout=120, worker_timeout=30, **extra_env):
    env = dict(os.environ, **extra_env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               DDP_WORKER_TIMEOUT=str(worker_timeout), OMPI_MCA_rmaps_base_oversubscribe="1")
    # --enable-recovery: a dead rank does not make mpirun end the others, so they report it.
    cmd = ["mpirun", "--enable-recovery", "--bind-to", "none", "-np", "2", sys.executable,
           os.path.join(HERE, "ddp_worker.py"), mode, str(out)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_collectives_match_numpy(tmp_path, device):
    # cpu: buffers the plugin reads in place (host memory); emu: memory the host cannot view,
    # staged through copies with the device plugin's allocator.
    if f"{device}:0" not in Device.list():
        pytest.skip(f"no {device} device")
    run = mpirun("collectives", tmp_path, POLYGRAD_DEVICE=device)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "ok0.txt").exists() and (tmp_path / "ok1.txt").exists()


def test_two_ranks_match_one_process_and_each_other(tmp_path):
    run = mpirun("train", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in (0, 1)]
    w0 = [ranks[0][k] for k in sorted(ranks[0].files, key=lambda k: int(k.split("_")[1]))]
    w1 = [ranks[1][k] for k in sorted(ranks[1].files, key=lambda k: int(k.split("_")[1]))]
    sys.path.insert(0, HERE)
    import ddp_worker
    reference = ddp_worker.train(rank=0, world=1, seed=0)
    assert len(w0) == len(w1) == len(reference) == 4
    for a, b, ref in zip(w0, w1, reference):
        # the same bits on both ranks (uint32 views: NaN-proof)
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
        np.testing.assert_allclose(a, ref, rtol=1e-4, atol=2e-5)
    # the ranks started from different weights (seeds 0 and 1): equal ones prove the broadcast


def test_a_killed_rank_is_named_by_the_other(tmp_path):
    run = mpirun("kill", tmp_path, worker_timeout=30)
    error = tmp_path / "error.txt"
    assert error.exists(), run.stdout + run.stderr
    seconds, message = error.read_text().split("\n", 1)
    assert "PG_ERR_PEER" in message and "peer rank 1" in message and "died" in message, message
    assert float(seconds) < 10, message  # found by watching the peer, long before the timeout


def test_a_stalled_rank_times_out_naming_it(tmp_path):
    start = time.monotonic()
    run = mpirun("stall", tmp_path, worker_timeout=3)
    error = tmp_path / "error.txt"
    assert error.exists(), run.stdout + run.stderr
    seconds, message = error.read_text().split("\n", 1)
    assert "PG_ERR_TIMEOUT" in message and "rank 1" in message, message
    assert 2.5 < float(seconds) < 20, message
    assert time.monotonic() - start < 60


def test_a_world_larger_than_the_launch_is_refused():
    # Not started by mpirun: the plugin refuses to wait for peers that will never come.
    env_keys = [k for k in os.environ if k.startswith(("OMPI_", "PMI"))]
    if env_keys:
        pytest.skip("running under an MPI launcher")
    with pytest.raises(PolygradDeviceError, match="not started by an MPI launcher"):
        dist.init(rank=0, world_size=2)
    assert not dist.is_initialized()
