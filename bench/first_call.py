#!/usr/bin/env python3
"""First-call latency: `(a @ b).relu().sum().item()` on 512x512 float32 in a fresh process.

Usage (the Makefile's `bench` target runs it):
  PYTHONPATH=frontends/python POLYGRAD_LIB=build/release/lib/libpolygrad.so \
    build/release/venv/bin/python bench/first_call.py [--rounds 5] [--no-torch]

Each round starts three fresh processes: polygrad over an empty kernel cache (a new cache_dir
set through a POLYGRAD_CONFIG file, and a new lowered-program cache, POLYGRAD_PROGRAM_CACHE),
polygrad over the caches the first one filled, and torch.
Each process times its own steps from the moment the parent started it: Python's start, numpy's
import, dlopen of libpolygrad, the Python package's import, making the two inputs (for polygrad:
plugin discovery, which opens and initialises every plugin found, and the device's opening,
then the copies), and the first call. POLYGRAD_TIMING=1 splits the first call into the host's
phases (schedule, the lowered-program cache, lower, render, load, launch, copy_out) and
POLYGRAD_LOG=debug the cpu_clang plugin's load into cache lookup, compile, cache write and link.
The kernels of one call build side by side (runtime/load_batch.hpp): their load steps are summed
over the build threads, and "waiting for builds" is the calling thread's wait for them before
launches. Prints the median of the rounds for each step, polygrad / torch ratios (x torch's
time: above 1 means polygrad is slower) and the targets of issue 37.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

N = 512

# The child: "marks" are seconds since the parent started it (time.time() on both sides).
CHILD = r"""
import json, os, sys, time
t0 = float(os.environ["FIRST_CALL_T0"])
marks = {"python": time.time() - t0}
import numpy as np
marks["numpy"] = time.time() - t0
rng = np.random.default_rng(0)
xa = rng.standard_normal((N, N), dtype=np.float32)
xb = rng.standard_normal((N, N), dtype=np.float32)
if LIB == "torch":
    import torch
    marks["import"] = time.time() - t0
    a, b = torch.from_numpy(xa), torch.from_numpy(xb)
    marks["inputs"] = time.time() - t0
    value = (a @ b).relu().sum().item()
else:
    import ctypes
    ctypes.CDLL(os.environ["POLYGRAD_LIB"])
    marks["dlopen"] = time.time() - t0
    from polygrad import Tensor
    marks["import"] = time.time() - t0
    a, b = Tensor(xa), Tensor(xb)
    marks["inputs"] = time.time() - t0
    value = (a @ b).relu().sum().item()
marks["result"] = time.time() - t0
ref = float(np.maximum(xa.astype(np.float64) @ xb.astype(np.float64), 0).sum())
print(json.dumps({"marks": marks, "value": value, "ref": ref}))
sys.stdout.flush()
"""

PHASE = re.compile(r"^polygrad: time (\w+)\s+([\d.]+) ms\s+(\d+) calls")
PLUGIN = re.compile(r"cpu_clang: kernel '[^']*': (cache hit|cache miss|compiled|cache write|linked)"
                    r" in ([\d.]+) ms")


def run_child(lib, env_extra):
    env = dict(os.environ, **env_extra)
    code = f"N = {N}\nLIB = {lib!r}\n" + CHILD
    t0 = time.time()
    env["FIRST_CALL_T0"] = repr(t0)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    exited = time.time() - t0
    if p.returncode != 0:
        sys.exit(f"first_call: the {lib} child failed ({p.returncode}):\n{p.stderr}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if abs(out["value"] - out["ref"]) > 1e-3 * abs(out["ref"]):
        sys.exit(f"first_call: {lib} gave {out['value']}, float64 numpy {out['ref']}")
    m = out["marks"]
    steps = {"python start": m["python"], "import numpy": m["numpy"] - m["python"]}
    if lib == "torch":
        steps["import torch"] = m["import"] - m["numpy"]
    else:
        steps["dlopen libpolygrad"] = m["dlopen"] - m["numpy"]
        steps["import polygrad"] = m["import"] - m["dlopen"]
    steps["inputs"] = m["inputs"] - m["import"]
    steps["first call"] = m["result"] - m["inputs"]
    steps["start to result"] = m["result"]
    steps["start to exit"] = exited
    phases = {}
    for line in p.stderr.splitlines():
        if (g := PHASE.match(line)):
            phases[g[1]] = float(g[2]) * 1e-3
        elif (g := PLUGIN.search(line)):
            phases[g[1]] = phases.get(g[1], 0.0) + float(g[2]) * 1e-3
    if lib != "torch":
        if "discover" not in phases:
            sys.exit("first_call: no POLYGRAD_TIMING lines in the child's stderr:\n" + p.stderr)
        get = lambda k: phases.get(k, 0.0)  # noqa: E731
        steps["  plugin dlopen (all found)"] = get("plugin_open")
        steps["  plugin init"] = get("plugin_init")
        steps["  discovery, rest"] = get("discover") - get("plugin_open") - get("plugin_init")
        steps["  device open"] = get("device_open")
        steps["  copies in, rest"] = steps["inputs"] - get("discover") - get("device_open")
        steps["  schedule"] = get("schedule")
        steps["  lower (codegen)"] = get("lower")
        steps["  render"] = get("render")
        plugin = get("cache hit") + get("cache miss") + get("compiled") + get("cache write")
        plugin += get("linked")
        steps["  load: cache lookup"] = get("cache hit") + get("cache miss")
        steps["  load: compile"] = get("compiled")
        steps["  load: cache write"] = get("cache write")
        steps["  load: link (ORC)"] = get("linked")
        steps["  load, rest"] = get("load") + get("build") - plugin
        steps["  load on this thread"] = get("load")
        steps["  waiting for builds"] = get("build_wait")
        steps["  launch"] = get("launch") - get("build_wait")
        steps["  copy out"] = get("copy_out")
        steps["  lowered-program cache"] = get("lowered_cache")
        host = (get("schedule") + get("lowered_cache") + get("lower") + get("render") + get("load")
                + get("launch"))
        steps["  graph building, Python"] = steps["first call"] - host - get("copy_out")
    return steps


ORDER = ["python start", "import numpy", "dlopen libpolygrad", "import polygrad", "import torch",
         "inputs", "  plugin dlopen (all found)", "  plugin init", "  discovery, rest",
         "  device open", "  copies in, rest", "first call", "  schedule",
         "  lowered-program cache", "  lower (codegen)",
         "  render", "  load: cache lookup", "  load: compile", "  load: cache write",
         "  load: link (ORC)", "  load, rest", "  load on this thread", "  waiting for builds",
         "  launch", "  copy out",
         "  graph building, Python", "start to result", "start to exit"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()
    if "POLYGRAD_LIB" not in os.environ:
        sys.exit("first_call: set POLYGRAD_LIB to libpolygrad's path (see the docstring)")
    work = tempfile.mkdtemp(prefix="pg_first_call_")
    config = os.path.join(work, "polygrad.yaml")
    pg_env = {"POLYGRAD_CONFIG": config, "POLYGRAD_TIMING": "1", "POLYGRAD_LOG": "debug"}
    runs = {"cold": [], "warm": [], "torch": []}
    try:
        for r in range(args.rounds):
            cache = os.path.join(work, f"cache{r}")
            pg_env["POLYGRAD_PROGRAM_CACHE"] = os.path.join(work, f"programs{r}")
            with open(config, "w") as f:
                f.write(f"devices:\n  cpu:\n    cache_dir: {cache}\n")
            runs["cold"].append(run_child("polygrad", pg_env))
            runs["warm"].append(run_child("polygrad", pg_env))
            if not args.no_torch:
                runs["torch"].append(run_child("torch", {}))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def med(kind, step):
        vals = [s[step] for s in runs[kind] if step in s]
        return statistics.median(vals) * 1e3 if vals else None

    kinds = [k for k in runs if runs[k]]
    print(f"(a @ b).relu().sum().item(), {N}x{N} float32, a fresh process each; median ms of "
          f"{args.rounds} rounds")
    head = {"cold": "empty cache", "warm": "warm cache", "torch": "torch"}
    print(f"{'step':30s}" + "".join(f"{head[k]:>13s}" for k in kinds))
    for step in ORDER:
        cells = [med(k, step) for k in kinds]
        if all(c is None for c in cells):
            continue
        print(f"{step:30s}" + "".join(f"{'' if c is None else f'{c:.1f}':>13s}" for c in cells))
    targets = [("first call, empty cache", med("cold", "first call"), 60),
               ("first call, warm cache", med("warm", "first call"), 5),
               ("start to result, empty cache", med("cold", "start to result"), 300),
               ("start to result, warm cache", med("warm", "start to result"), 300)]
    print()
    for name, ms, target in targets:
        verdict = "met" if ms <= target else "NOT met"
        line = f"{name:30s} {ms:8.1f} ms  target <= {target} ms: {verdict}"
        if runs["torch"]:
            step = "first call" if "first" in name else "start to result"
            line += f"  ({ms / med('torch', step):.2f}x torch's time)"
        print(line)


if __name__ == "__main__":
    main()
