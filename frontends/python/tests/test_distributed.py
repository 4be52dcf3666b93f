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
from polygrad import Device, PolygradDeviceError, PolygradValueError

HERE = os.path.dirname(os.path.abspath(__file__))


def _ccl_mpi_missing():
    if shutil.which("mpirun") is None:
        return "no mpirun (install openmpi-bin)"
    line = [r for r in Device.report().splitlines() if "polygrad_ccl_mpi.so" in r]
    if not line or not line[0].startswith("loaded"):
        return "the ccl_mpi plugin is not loaded: " + (line[0] if line else "not built")
    return ""


needs_mpi = pytest.mark.skipif(bool(_ccl_mpi_missing()), reason=_ccl_mpi_missing())
LOOPBACK = os.environ.get("POLYGRAD_TEST_CCL_PLUGIN", "")
needs_loopback = pytest.mark.skipif(not os.path.isfile(LOOPBACK),
                                    reason="no loopback ccl plugin (tests/ccl; run_tests.sh "
                                           "sets POLYGRAD_TEST_CCL_PLUGIN)")


@pytest.fixture
def loopback():
    """A world of one over the loopback ccl plugin (no MPI); left again after the test."""
    assert Device.load(LOOPBACK) == "loopback"
    yield
    dist.shutdown()


@needs_loopback
def test_api_over_one_rank(loopback):
    from polygrad import Tensor
    dist.init("loopback", rank=0, world_size=1, timeout=4)
    assert (dist.rank(), dist.world_size(), dist.transport()) == (0, 1, "loopback")
    x = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(dist.all_reduce(x * 2, "mean").numpy(), x.numpy() * 2)
    assert dist.all_gather(x).shape == (1, 2, 3)
    with pytest.raises(PolygradValueError, match="reduction 'min'"):
        dist.all_reduce(x, "min")
    with pytest.raises(RuntimeError, match="already initialised"):
        dist.init("loopback", rank=0, world_size=1)
    dist.shutdown()
    with pytest.raises(RuntimeError, match="call init"):
        dist.rank()


@needs_loopback
def test_collectives_replay_in_a_capture(loopback):
    from polygrad import Tensor, TinyJit
    dist.init("loopback", rank=0, world_size=1, timeout=4)

    @TinyJit
    def f(x):
        y = (x * 2).contiguous()
        dist.all_reduce_(y, "max")  # in place, then read by the kernel after it
        return dist.all_gather(dist.all_reduce(y, "mean") + 1)[0] - x

    rng = np.random.default_rng(0)
    for _ in range(5):  # eager, captured, then replayed over new inputs
        v = rng.standard_normal((3, 4)).astype(np.float32)
        np.testing.assert_allclose(f(Tensor(v)).numpy(), v + 1, rtol=1e-6, atol=1e-6)


@needs_loopback
def test_a_dead_peer_raises_comm_error(loopback):
    from polygrad import PolygradCommError, Tensor
    dist.init("loopback", rank=0, world_size=1, address="fail:peer")
    with pytest.raises(PolygradCommError, match=r"PG_ERR_PEER: .*peer rank 1 \(pid 4242"):
        dist.all_reduce(Tensor([1.0, 2.0]))
    with pytest.raises(PolygradCommError):
        dist.barrier()


def test_an_unknown_backend_names_the_loaded_ones():
    with pytest.raises(PolygradValueError, match="no ccl plugin named 'nope'"):
        dist.init("nope", rank=0, world_size=1)
    assert not dist.is_initialized()


def mpirun(mode, out, timeout=120, worker_timeout=30, **extra_env):
    env = dict(os.environ, **extra_env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               DDP_WORKER_TIMEOUT=str(worker_timeout), OMPI_MCA_rmaps_base_oversubscribe="1")
    # --enable-recovery: a dead rank does not make mpirun end the others, so they report it.
    cmd = ["mpirun", "--enable-recovery", "--bind-to", "none", "-np", "2", sys.executable,
           os.path.join(HERE, "ddp_worker.py"), mode, str(out)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


@needs_mpi
@pytest.mark.parametrize("device", ["cpu", "emu"])
def test_collectives_match_numpy(tmp_path, device):
    # cpu: buffers the plugin reads in place (host memory); emu: memory the host cannot view,
    # staged through copies with the device plugin's allocator.
    if f"{device}:0" not in Device.list():
        pytest.skip(f"no {device} device")
    run = mpirun("collectives", tmp_path, POLYGRAD_DEVICE=device)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "ok0.txt").exists() and (tmp_path / "ok1.txt").exists()


@needs_mpi
@pytest.mark.parametrize("mode", ["train", "jit"])
def test_two_ranks_match_one_process_and_each_other(tmp_path, mode):
    # jit: the whole step, the gradients' all_reduce included, captured and replayed
    run = mpirun(mode, tmp_path)
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


@needs_mpi
def test_a_killed_rank_is_named_by_the_other(tmp_path):
    run = mpirun("kill", tmp_path, worker_timeout=30)
    error = tmp_path / "error.txt"
    assert error.exists(), run.stdout + run.stderr
    seconds, message = error.read_text().split("\n", 1)
    assert "PG_ERR_PEER" in message and "peer rank 1" in message and "died" in message, message
    assert float(seconds) < 10, message  # found by watching the peer, long before the timeout


@needs_mpi
def test_a_stalled_rank_times_out_naming_it(tmp_path):
    start = time.monotonic()
    run = mpirun("stall", tmp_path, worker_timeout=3)
    error = tmp_path / "error.txt"
    assert error.exists(), run.stdout + run.stderr
    seconds, message = error.read_text().split("\n", 1)
    assert "PG_ERR_TIMEOUT" in message and "rank 1" in message, message
    assert 2.5 < float(seconds) < 20, message
    assert time.monotonic() - start < 60


@needs_mpi
def test_a_rank_that_never_starts_times_out_the_others_init(tmp_path):
    run = mpirun("late", tmp_path, worker_timeout=3)
    error = tmp_path / "error.txt"
    assert error.exists(), run.stdout + run.stderr
    seconds, message = error.read_text().split("\n", 1)
    assert "PG_ERR_TIMEOUT: MPI_Init did not finish within 3 s" in message, message
    assert 2.5 < float(seconds) < 20, message


@needs_mpi
def test_a_world_larger_than_the_launch_is_refused():
    # Not started by mpirun: the plugin refuses to wait for peers that will never come.
    env_keys = [k for k in os.environ if k.startswith(("OMPI_", "PMI"))]
    if env_keys:
        pytest.skip("running under an MPI launcher")
    with pytest.raises(PolygradDeviceError, match="not started by an MPI launcher"):
        dist.init(rank=0, world_size=2)
    assert not dist.is_initialized()


def test_nccl_without_a_gpu_says_why():
    line = [r for r in Device.report().splitlines() if "polygrad_ccl_nccl.so" in r]
    if not line:
        pytest.skip("the ccl_nccl plugin is not built (no CUDA toolkit with nccl.h)")
    if line[0].endswith(": usable"):
        pytest.skip("NCCL can make communicators here (a GPU)")
    reason = line[0].split(": unusable: ", 1)[1]
    assert reason.startswith(("no CUDA driver", "no CUDA device", "no NCCL")), line[0]
    with pytest.raises(PolygradValueError, match="ccl plugin nccl cannot make communicators "
                                                 "in this process: no "):
        dist.init(backend="nccl")
    assert not dist.is_initialized()
