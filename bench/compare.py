#!/usr/bin/env python3
"""Side by side: polygrad (bench_ops) against numpy and torch on the same cases, in one run.

Usage: /usr/bin/python3 bench/compare.py [path/to/bench_ops] [case-substring]
Needs Debian's python3-numpy and (for the torch column) python3-torch.

Torch runs in its best configuration on this machine (2 threads, passive OpenMP waiting, and
on an AVX-512 host OpenBLAS's SkylakeX kernels); set those variables before this script starts
for them to apply to OpenBLAS (the Makefile's `bench` target does, and leaves the core type to
OpenBLAS on a host without AVX-512, where SkylakeX kernels die of SIGILL). Prints median
milliseconds and ratios (peer time / polygrad time: > 1 means polygrad is faster).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # numpy-only comparison
    torch = None


def median_ms(fn, reps):
    fn()
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


def peer_cases():
    rng = np.random.default_rng(0)
    big = 16 * 1024 * 1024
    a, b, c = (rng.uniform(-1, 1, big).astype(np.float32) for _ in range(3))
    out = np.empty_like(a)
    x = rng.uniform(-1, 1, (4096, 4096)).astype(np.float32)
    cases = {}

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    cases["axpb_prealloc"] = {"numpy": (lambda: np.add(np.multiply(a, b, out=out), c, out=out), 20)}
    cases["axpb_new"] = {"numpy": (lambda: a * b + c, 20)}
    cases["sum"] = {"numpy": (lambda: a.sum(), 20)}
    cases["softmax_4096"] = {"numpy": (np_softmax, 5)}
    mats = {n: (rng.uniform(-1, 1, (n, n)).astype(np.float32),
                rng.uniform(-1, 1, (n, n)).astype(np.float32)) for n in (256, 512, 1024, 2048)}
    for n, (ma, mb) in mats.items():
        cases[f"matmul_{n}"] = {"numpy": (lambda ma=ma, mb=mb: ma @ mb, 10 if n < 2048 else 3)}
    lx, lw = mats[1024]
    cases["linear_1024"] = {"numpy": (lambda: lx @ lw.T, 10)}
    gdy, gx = (rng.uniform(-1, 1, (512, 1024)).astype(np.float32) for _ in range(2))
    cases["wgrad_1024"] = {"numpy": (lambda: gdy.T @ gx, 10)}
    if torch is not None:
        torch.set_num_threads(2)
        ta, tb, tc, tout = (torch.from_numpy(v) for v in (a, b, c, out))
        tx = torch.from_numpy(x)
        cases["axpb_prealloc"]["torch"] = (lambda: torch.addcmul(tc, ta, tb, out=tout), 20)
        cases["axpb_new"]["torch"] = (lambda: ta * tb + tc, 20)
        cases["sum"]["torch"] = (lambda: ta.sum(), 20)
        cases["softmax_4096"]["torch"] = (lambda: torch.softmax(tx, dim=1), 10)
        for n, (ma, mb) in mats.items():
            tma, tmb = torch.from_numpy(ma), torch.from_numpy(mb)
            cases[f"matmul_{n}"]["torch"] = (lambda tma=tma, tmb=tmb: tma @ tmb,
                                             10 if n < 2048 else 3)
        tlx, tlw = torch.from_numpy(lx), torch.from_numpy(lw)
        cases["linear_1024"]["torch"] = (lambda: tlx @ tlw.T, 10)
        tdy, tgx = torch.from_numpy(gdy), torch.from_numpy(gx)
        cases["wgrad_1024"]["torch"] = (lambda: tdy.T @ tgx, 10)
    return cases


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/release/bin/bench_ops"
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    env = dict(os.environ)
    ours = {}
    run = subprocess.run([exe, only], env=env, capture_output=True, text=True, check=True)
    for line in run.stdout.splitlines():
        rec = json.loads(line)
        ours[rec["case"]] = rec["ms"]
    cases = peer_cases()
    print(f"{'case':<16}{'polygrad ms':>12}{'numpy ms':>10}{'ratio':>7}{'torch ms':>10}{'ratio':>7}")
    for name, ms in ours.items():
        row = f"{name:<16}{ms:>12.3f}"
        for peer in ("numpy", "torch"):
            if name in cases and peer in cases[name]:
                fn, reps = cases[name][peer]
                t = median_ms(fn, reps)
                row += f"{t:>10.3f}{t / ms:>7.2f}"
            else:
                row += f"{'-':>10}{'-':>7}"
        if name.startswith(("matmul_", "linear_", "wgrad_")):
            n = int(name.split("_")[1])
            flops = 2 * n ** 3 // (2 if name.startswith("wgrad_") else 1)  # batch 512
            row += f"   polygrad {flops / ms / 1e6:.1f} GFLOP/s"
        print(row)


if __name__ == "__main__":
    main()
