"""Micro-benchmarks of the Python frontend, side by side with torch in one run.

    build/<dir>/venv/bin/python frontends/python/bench.py
(set OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 for torch's best, and OPENBLAS_CORETYPE=SkylakeX
on an AVX-512 host only: without AVX-512 those kernels die of SIGILL.)
"""
import time

import numpy as np
import torch

from polygrad import Tensor, TinyJit
from polygrad.nn import SGD, Linear, compile_step, get_parameters


def per_call(f, n, rounds=5):
    """Seconds per call: the best of `rounds` runs of n calls (the machine may be shared)."""
    f()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def main():
    a, b = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
    ta, tb = torch.rand(16, 16), torch.rand(16, 16)
    print(f"lazy op (a + b):            polygrad {per_call(lambda: a + b, 20000) * 1e6:7.2f} us")
    print(f"lazy op (a * 2.0):          polygrad {per_call(lambda: a * 2.0, 20000) * 1e6:7.2f} us")
    print(f"eager op (a + b):           torch    {per_call(lambda: ta + tb, 20000) * 1e6:7.2f} us")
    print(f"small graph build+realize:  polygrad "
          f"{per_call(lambda: ((a + b) * 2.0).relu().realize(), 2000) * 1e6:7.2f} us "
          f"(3 lazy ops + realize, cached kernel)")
    print(f"  of which the 3 lazy ops:  polygrad "
          f"{per_call(lambda: ((a + b) * 2.0).relu(), 2000) * 1e6:7.2f} us")

    rng = np.random.default_rng(0)
    x_np = rng.normal(size=(256, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, 256).astype(np.int32)
    l1, l2 = Linear(784, 128), Linear(128, 10)
    opt = SGD(get_parameters([l1, l2]), lr=0.01)
    x, y = Tensor(x_np), Tensor(y_np)

    def step():
        opt.zero_grad()
        loss = l2(l1(x).relu()).cross_entropy(y)
        loss.backward()
        opt.step()

    tl1, tl2 = torch.nn.Linear(784, 128), torch.nn.Linear(128, 10)
    topt = torch.optim.SGD(list(tl1.parameters()) + list(tl2.parameters()), lr=0.01)
    tx, ty = torch.tensor(x_np), torch.tensor(y_np).long()

    def tstep():
        topt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tl2(tl1(tx).relu()), ty)
        loss.backward()
        topt.step()

    for _ in range(5):
        step()
        tstep()
    def train_step(x, y):
        loss = l2(l1(x).relu()).cross_entropy(y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    opt.zero_grad()  # step() leaves gradients; a captured backward must not add to them
    compiled = compile_step(train_step, x, y)
    jitted = TinyJit(train_step)
    x2, y2 = Tensor(x_np), Tensor(y_np)  # TinyJit takes its inputs as arguments on each call
    print(f"MLP 784-128-10 b256 SGD:    polygrad {per_call(step, 50) * 1e3:7.3f} ms/step, "
          f"compile_step {per_call(compiled.run, 50) * 1e3:7.3f} ms/step, "
          f"TinyJit {per_call(lambda: jitted(x2, y2), 50) * 1e3:7.3f} ms/step, "
          f"torch {per_call(tstep, 50) * 1e3:7.3f} ms/step (torch threads "
          f"{torch.get_num_threads()})")


if __name__ == "__main__":
    main()
