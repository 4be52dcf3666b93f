"""Differential fuzzing of polygrad's scheduler and codegen against torch.

Each seed gives a random program (fuzz_gen.py: a chain of 3-8 ops over small random shapes,
often on views and with values used by several consumers; the ops are in fuzz_ops.py). The
program runs on polygrad and on torch (float32, and float64 as the reference for rounding), and
the forward values and the gradients of sum(out * u) with respect to every input are compared.

In batch mode (a third of the seeds, or all with --mode batch) the program's leading axis is a
symbolic size B and the same program runs for several B in one process (in a random order, the
first size once more at the end with other data), which exercises the reuse of compiled kernels
over a runtime size variable and the schedule cache. A third of the programs realise their
outputs and gradients with one Tensor.realize_all.

Failures print the seed and the program; each is tagged when it goes away with the outputs read
one at a time ("[realize_all only]") or with every max/min input realised first ("[max
recompute]"): the signatures of two bugs this script found, both fixed (see classify()). An
exception on valid input is a failure too; the generator makes valid programs only.

    python fuzz_graphs.py --seeds 0-500            # fuzz (worker processes; crashes survive)
    python fuzz_graphs.py --seeds 17 --show        # print one seed's program and the details
    python fuzz_graphs.py --seeds 0-99 --mode batch --log results.jsonl

Import use (tests): gen_program(seed), check_program(prog) -> list of failure strings.
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np
import torch

from polygrad import Tensor

import fuzz_ops
from fuzz_gen import describe, gen_program
from fuzz_ops import APPLY, Lib, ev

torch.set_num_threads(1)


# ---- running and comparing -------------------------------------------------------------------

def make_data(prog, B, run_no=0):
    """Input arrays for batch size B (the same for every library)."""
    data = {}
    for i, (op, args, p, shape) in enumerate(prog["instrs"]):
        rng = np.random.default_rng([prog["seed"], B, i, run_no])
        s = ev(shape, B)
        if op == "input":
            data[i] = rng.uniform(p["lo"], p["hi"], s).astype(np.float32)
        elif op == "index":
            data[i] = rng.integers(0, p["hi"], s).astype(np.int64)
    return data


def run(prog, L, B, data):
    vals = []
    leaves = []
    for i, (op, args, p, shape) in enumerate(prog["instrs"]):
        if op == "input":
            t = L.leaf(data[i])
            leaves.append((i, t))
        elif op == "index":
            t = L.index(data[i])
        else:
            xs = [vals[a] if a >= 0 else None for a in args]
            t = APPLY[op](L, *xs, p=p, B=B)
        vals.append(t)
        if not L.pg and tuple(t.shape) != ev(shape, B):
            raise AssertionError(f"generator: v{i} {op} has torch shape {tuple(t.shape)}, "
                                 f"expected {ev(shape, B)}")
    return [vals[o] for o in prog["outs"]], leaves


def _us(prog, outs_shapes, B):
    rng = np.random.default_rng([prog["seed"], B, 7777])
    return [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in outs_shapes]


def _ref(prog, kind, B, data, us):
    L = Lib(kind)
    outs, leaves = run(prog, L, B, data)
    loss = sum((o * L.const(u)).sum() for o, u in zip(outs, us))
    loss.backward()
    vals = [o.detach().numpy().astype(np.float64) for o in outs]
    grads = {i: (t.grad.numpy().astype(np.float64) if t.grad is not None else
                 np.zeros(t.shape)) for i, t in leaves}
    return vals, grads


def _close(name, got, r32, r64, tol, r32c=None):
    """got vs torch float32, allowing tol of the reference's scale plus 20x torch's own
    float32 rounding error at each element plus 10x its largest one in the array (a sum that
    cancels to about 0 has torch's rounding error at one element and ours at another). Torch's
    error is the larger of its fused ops' (r32) and of the composites polygrad computes (r32c:
    a layernorm of equal values divides rounding noise by sqrt(eps), and its gradient through
    the composite carries 75x more noise than torch's fused backward)."""
    if got.shape != r32.shape:
        return f"{name}: shape {got.shape} != torch {r32.shape}"
    scale = max(1.0, float(np.max(np.abs(r64)))) if r64.size else 1.0
    noise = np.abs(r32 - r64)
    if r32c is not None:
        noise = np.maximum(noise, np.abs(r32c - r64))
    noise = np.where(np.isfinite(noise), noise, 0)
    allowed = tol * scale + tol * np.abs(r64) + 20 * noise + 10 * (noise.max() if noise.size
                                                                   else 0)
    bad = ~(np.abs(got - r32) <= allowed)
    bad &= ~(np.isnan(got) & np.isnan(r32))
    bad &= np.isfinite(r32) | ~np.isfinite(r64)  # torch's own float32 overflow
    if bad.any():
        idx = np.argwhere(bad)
        first = tuple(int(q) for q in idx[0])
        err = np.abs(got - r32)
        err = np.where(np.isnan(err), np.inf, err)
        return (f"{name}: {int(bad.sum())}/{bad.size} wrong, max err {float(err.max()):.4g} "
                f"(scale {scale:.3g}); at {first}: polygrad {got[first]!r} torch "
                f"{r32[first]!r}")
    return None


def check_program(prog, sizes=None, tol=1e-4, tag_realize_all=True):
    """Runs prog for each batch size; returns a list of failure strings (empty: pass).
    A string starting with 'SKIP' means the reference itself is not finite at that size."""
    fails = []
    seen = {}
    for B in (sizes or prog["sizes"]):
        seen[B] = seen.get(B, -1) + 1
        data = make_data(prog, B, seen[B])
        shapes = [ev(prog["instrs"][o][3], B) for o in prog["outs"]]
        us = _us(prog, shapes, B)
        v32, g32 = _ref(prog, "t32", B, data, us)
        v64, g64 = _ref(prog, "t64", B, data, us)
        # (the composites differ from t32 only in a layernorm)
        layernorm = any(p.get("name") == "layernorm" for _, _, p, _ in prog["instrs"])
        v32c, g32c = _ref(prog, "t32c", B, data, us) if layernorm else (v32, g32)
        arrs = [a for a in v64 + list(g64.values()) if a.size]
        if not all(np.all(np.isfinite(a)) and np.max(np.abs(a)) < 1e15 for a in arrs):
            fails.append(f"SKIP B={B}: reference not finite or too large")
            continue
        try:
            L = Lib("pg")
            outs, leaves = run(prog, L, B, data)
            loss = None
            for o, u in zip(outs, us):
                term = (o * L.const(u)).sum()
                loss = term if loss is None else loss + term
            loss.backward()
            if prog["realize_all"]:
                gs = [t.grad for _, t in leaves if t.grad is not None]
                Tensor.realize_all(*outs, *gs)
            pv = [o.numpy().astype(np.float64) for o in outs]
            pg = {}
            for i, t in leaves:
                g = t.grad
                pg[i] = g.numpy().astype(np.float64) if g is not None else np.zeros(t.shape)
        except Exception as e:  # an exception on valid input is a bug too
            fails.append(f"B={B}: EXCEPTION {type(e).__name__}: {str(e)[:500]}")
            continue
        before = len(fails)
        for k, (a, b, c, d) in enumerate(zip(pv, v32, v64, v32c)):
            m = _close(f"B={B} value of out {k} (v{prog['outs'][k]})", a, b, c, tol, d)
            if m:
                fails.append(m)
        for i in g32:
            m = _close(f"B={B} grad of v{i}", pg[i], g32[i], g64[i], tol * 10, g32c[i])
            if m:
                fails.append(m)
        if len(fails) > before and tag_realize_all:
            fails[before:] = [classify(prog, B, tol) + f for f in fails[before:]]
    return fails


def classify(prog, B, tol):
    """A tag for a failure of prog at size B that goes away when (a) the outputs and gradients
    are read one at a time instead of with one realize_all (the signature of a fixed bug: a root
    the schedule realised as an intermediate first had its memory reused), or (b) every
    max/min's input is realised first (the signature of another: the forward max and its
    gradient's x == max recomputed x in different kernels, rounded differently)."""
    tags = ""
    if prog["realize_all"] and not _fails(dict(prog, realize_all=False), B, tol):
        tags += "[realize_all only] "
    fuzz_ops.PIN_MAX = True
    try:
        if not _fails(prog, B, tol):
            tags += "[max recompute] "
        elif not tags and prog["realize_all"] and \
                not _fails(dict(prog, realize_all=False), B, tol):
            tags += "[realize_all only + max recompute] "
    finally:
        fuzz_ops.PIN_MAX = False
    return tags


def _fails(prog, B, tol):
    return [f for f in check_program(prog, [B], tol, tag_realize_all=False)
            if not f.startswith("SKIP")]


# ---- driver ----------------------------------------------------------------------------------

def parse_seeds(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def worker(seeds, mode):
    batch = {"plain": False, "batch": True, "mixed": None}[mode]
    for s in seeds:
        t0 = time.time()
        try:
            prog = gen_program(s, batch)
            fails = check_program(prog)
            real = [f for f in fails if not f.startswith("SKIP")]
            status = "fail" if real else "skip" if fails else "ok"
            fails = real or fails
        except AssertionError as e:  # the generator made an invalid program
            prog, fails, status = None, [f"GENERATOR: {e}"], "invalid"
        except Exception as e:
            prog, fails, status = None, [f"HARNESS: {type(e).__name__}: {e}\n"
                                         f"{traceback.format_exc()}"], "invalid"
        rec = {"seed": s, "status": status, "fails": fails, "t": round(time.time() - t0, 2)}
        if status in ("fail", "invalid") and prog is not None:
            rec["prog"] = describe(prog)
        print("RESULT " + json.dumps(rec), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0-99")
    ap.add_argument("--mode", default="mixed", choices=["plain", "batch", "mixed"])
    ap.add_argument("--show", action="store_true", help="print programs and run in-process")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per seed")
    ap.add_argument("--log", default=None, help="append JSON results to this file")
    ap.add_argument("--per-worker", type=int, default=1000,
                    help="seeds per worker process (every compiled kernel stays mapped for the "
                         "life of a process: about 4000 seeds exhaust vm.max_map_count)")
    args = ap.parse_args()
    seeds = parse_seeds(args.seeds)
    if args.worker:
        worker(seeds, args.mode)
        return
    if args.show:
        batch = {"plain": False, "batch": True, "mixed": None}[args.mode]
        for s in seeds:
            prog = gen_program(s, batch)
            print(describe(prog))
            for f in check_program(prog):
                print("  FAIL", f)
        return
    # Parent: worker processes run the seeds (--per-worker each); a crash or hang is recorded
    # and a new worker goes on after that seed.
    todo = list(seeds)
    counts = {"ok": 0, "fail": 0, "skip": 0, "invalid": 0, "crash": 0}
    t_start = time.time()
    log = open(args.log, "a") if args.log else None
    batch = {"plain": False, "batch": True, "mixed": None}[args.mode]
    while todo:
        chunk = todo[:args.per_worker]
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", args.mode,
               "--seeds", ",".join(map(str, chunk))]
        errf = tempfile.TemporaryFile(mode="w+")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(q) for q in p.stdout] + [lines.put(None)],
                         daemon=True).start()
        last = time.time()
        hung = False
        while True:
            try:
                line = lines.get(timeout=5)
            except queue.Empty:
                if time.time() - last > args.timeout:
                    hung = True
                    p.kill()
                    break
                continue
            if line is None:
                break
            last = time.time()
            if not line.startswith("RESULT "):
                continue
            rec = json.loads(line[7:])
            todo.remove(rec["seed"])
            counts[rec["status"]] += 1
            if log:
                log.write(json.dumps(rec) + "\n")
                log.flush()
            if rec["status"] in ("fail", "invalid"):
                print(f"=== seed {rec['seed']}: {rec['status'].upper()}")
                if "prog" in rec:
                    print(rec["prog"])
                for f in rec["fails"]:
                    print("  ", f)
                sys.stdout.flush()
        p.wait()
        if any(s in todo for s in chunk):
            s = next(s for s in chunk if s in todo)
            todo.remove(s)
            errf.seek(0)
            err = errf.read()[-3000:] if not hung else ""
            counts["crash"] += 1
            msg = "HANG" if hung else f"CRASH rc={p.returncode}"
            print(f"=== seed {s}: {msg}\n{describe(gen_program(s, batch))}\n{err}")
            sys.stdout.flush()
            if log:
                log.write(json.dumps({"seed": s, "status": "crash", "fails": [msg, err]}) + "\n")
                log.flush()
        errf.close()
    print(f"done: {len(seeds)} seeds in {time.time() - t_start:.0f} s: {counts}")
    if log:
        log.close()


if __name__ == "__main__":
    main()
