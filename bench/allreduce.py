#!/usr/bin/env python3
"""Allreduce of 1M to 64M float32 through polygrad's ccl_mpi plugin against raw MPI (mpi4py's
Allreduce on numpy arrays), both in the same ranks of one mpirun.

Usage (starts `mpirun -np 2` itself when not already under a launcher):
  build/release/venv/bin/python bench/allreduce.py [--ranks 2] [--rounds 7]

Each rank holds a realised polygrad tensor and a numpy array of the same size. Per size, the
rounds alternate polygrad's `distributed.all_reduce(x)` (sum; it realises nothing, finishes the
device's work, and writes a new tensor: a fresh buffer, whose pages the kernel maps on first
touch), polygrad's in-place `distributed.all_reduce_(x)` (into x's own buffer), mpi4py's
blocking `comm.Allreduce(a, b)` into a preallocated array, and mpi4py's nonblocking
`comm.Iallreduce(a, b).Wait()` (the MPI call the plugin makes, which it polls with MPI_Test
against its deadline), each after a barrier; the median over the rounds of the slowest rank is
reported. Bus bandwidth as nccl-tests count it: 2 (n-1)/n bytes / time for n ranks. The ratios
are polygrad's in-place bandwidth over each raw MPI call's (above 1: polygrad is faster).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = [1 << 20, 4 << 20, 16 << 20, 64 << 20]


def under_launcher():
    return any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))


def relaunch(args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = ["mpirun", "--bind-to", "none", "-np", str(args.ranks), sys.executable,
           os.path.abspath(__file__), "--rounds", str(args.rounds)]
    return subprocess.call(cmd, env=env)


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    if not under_launcher():
        return relaunch(args)

    from mpi4py import MPI  # starts MPI; the plugin then uses the same MPI_COMM_WORLD
    import polygrad.distributed as dist
    from polygrad import Tensor

    dist.init()
    comm = MPI.COMM_WORLD
    rank, world = dist.rank(), dist.world_size()
    if rank == 0:
        print(f"allreduce (sum, float32) over {world} ranks, {dist.transport()}; "
              f"median of {args.rounds} rounds")
        print(f"{'floats':>8} {'MB':>6} {'new ms':>8} {'in place ms':>12} {'MPI ms':>8} "
              f"{'MPI nb ms':>10} {'in place GB/s':>14} {'MPI GB/s':>9} {'ratio':>6} "
              f"{'ratio nb':>9}")
    for n in SIZES:
        a = np.full(n, rank + 1, dtype=np.float32)
        b = np.empty_like(a)
        x = Tensor(a).realize()
        want = world * (world + 1) / 2
        # warm-up and a check of both results
        y = dist.all_reduce(x)
        comm.Allreduce(a, b)
        assert float(y[0].item()) == want and float(y[-1].item()) == want and b[0] == want
        del y
        ours, inplace, raw, raw_nb = [], [], [], []
        z = Tensor(np.zeros(n, dtype=np.float32)).realize()  # zeros stay zeros when summed
        for _ in range(args.rounds):
            comm.Barrier()
            ours.append(timed(lambda: dist.all_reduce(x)))
            comm.Barrier()
            inplace.append(timed(lambda: dist.all_reduce_(z)))
            comm.Barrier()
            raw.append(timed(lambda: comm.Allreduce(a, b)))
            comm.Barrier()
            raw_nb.append(timed(lambda: comm.Iallreduce(a, b).Wait()))
        # the slowest rank decides a collective's time
        assert float(z[0].item()) == 0
        t_ours, t_in, t_raw, t_nb = (comm.allreduce(statistics.median(t), op=MPI.MAX)
                                     for t in (ours, inplace, raw, raw_nb))
        bus = 2 * (world - 1) / world * n * 4
        if rank == 0:
            print(f"{n >> 20:>7}M {n * 4 / 1e6:>6.0f} {t_ours * 1e3:>8.2f} {t_in * 1e3:>12.2f} "
                  f"{t_raw * 1e3:>8.2f} {t_nb * 1e3:>10.2f} {bus / t_in / 1e9:>14.2f} "
                  f"{bus / t_raw / 1e9:>9.2f} {t_raw / t_in:>6.2f} {t_nb / t_in:>9.2f}",
                  flush=True)
    dist.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
