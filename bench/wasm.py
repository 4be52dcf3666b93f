"""The wasm device beside the cpu device on one thread, in the same run: issue 34's targets.

    PYTHONPATH=frontends/python POLYGRAD_LIB=$PWD/build/release/lib/libpolygrad.so \\
      python3 bench/wasm.py [--engine v8] [--compile tiered,optimized] [--cases axpb,sum]
                            [--rounds 3] [--clock process]

Cases: a*b+c and a sum over 1M floats, softmax over the rows of 256x1024, a 256^3 matmul, and
`x + 1` over 16 floats for the launch overhead. Each (case, device) runs in a fresh process of
this script with POLYGRAD_TIMING=1 and a config file that gives the cpu device (cpu_clang) one
thread and the wasm device the engine asked. The child checks its result against numpy (float64)
once, realises the case twice more to warm up, sleeps 0.3 s (the v8 engine's `compile: tiered`
compiles the kernels with TurboFan in a background task meanwhile, so the rounds time the
steady state's code), then times the best of `rounds` rounds of N realises, each into the same
output buffer (Tensor.assign; a sum's scalar is new each time). With the v8 engine the wasm
device runs once per way of compiling in `--compile` (default both: tiered, then optimized);
the speed column is the first's.

`--clock process` times the rounds with the child's CPU time (time.process_time) instead of
the wall clock: on a host where other work competes for the cores, the time the child ran,
which waiting for a core does not inflate (both devices run on the calling thread: the cpu
device has one thread; V8 compiles on the loading thread, and with `compile: tiered` also in
its one background task, whose CPU time the child's includes).

Columns, per case: the wasm kernels per realise; the launch phase per realise (the host's
POLYGRAD_TIMING `launch`: each kernel's launch and one synchronise, averaged over every realise
of the child, warm-up included); the wall time of one realise, best round (graph building and
scheduling included, the same host work on both devices); wasm's speed against the cpu's
(cpu wall / wasm wall: 1 is native speed) and issue 34's target (matmul: GFLOP/s from the wall
time). Then the wasm kernels' render and load (for the v8 engine: V8's compile and
instantiate on the loading thread; tiered's background TurboFan compile is not in it) times
per kernel, per way of compiling, from the same children's `render` and `load` phases (each
kernel is rendered and loaded once, on its first realise); the launch phase of the 16-float
case; and
bench_wasm_engine's figures (render, load and launch through the plugin's C tables, median of
3), when it is built beside libpolygrad.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

N = 1 << 20
CASES = {
    # name: what it computes (make_case builds it)
    "axpb": "a*b+c, 1M float32",
    "sum": "sum, 1M float32",
    "softmax": "softmax rows, 256x1024",
    "matmul": "matmul 256^3 float32",
    "launch": "x+1, 16 float32 (launch overhead)",
}
TARGET = {"axpb": ("speed", 0.9), "sum": ("speed", 0.9), "softmax": ("speed", 0.6),
          "matmul": ("gflops", 15.0)}
PHASE = re.compile(r"^polygrad: time (\w+)\s+([\d.]+) ms\s+(\d+) calls")


def make_case(name, rng):
    """(numpy inputs, function of tensors, numpy float64 reference, flops per run)."""
    f32 = np.float32
    if name == "axpb":
        xs = [rng.standard_normal(N).astype(f32) for _ in range(3)]
        return xs, lambda a, b, c: a * b + c, xs[0].astype(float) * xs[1] + xs[2], None
    if name == "sum":
        xs = [rng.standard_normal(N).astype(f32)]
        return xs, lambda a: a.sum(), np.array(xs[0].astype(float).sum()), None
    if name == "softmax":
        x = rng.standard_normal((256, 1024)).astype(f32)
        e = np.exp(x.astype(float) - x.max(axis=1, keepdims=True))
        return [x], lambda a: a.softmax(axis=1), e / e.sum(axis=1, keepdims=True), None
    if name == "matmul":
        xs = [rng.standard_normal((256, 256)).astype(f32) for _ in range(2)]
        return xs, lambda a, b: a @ b, xs[0].astype(float) @ xs[1], 2 * 256 ** 3
    if name == "launch":
        xs = [rng.standard_normal(16).astype(f32)]
        return xs, lambda a: a + 1, xs[0].astype(float) + 1, None
    raise SystemExit(f"wasm.py: unknown case {name}")


def child(name, device, rounds, clock="wall"):
    """Runs one case on one device; prints one JSON line."""
    now = time.process_time if clock == "process" else time.perf_counter
    from polygrad import Tensor
    xs, fn, want, _ = make_case(name, np.random.default_rng(0))
    ts = [Tensor(x, device=device).realize() for x in xs]
    out = fn(*ts).realize()
    got = out.numpy().astype(float)
    err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))

    def run():  # into the same output buffer each time (a sum's scalar is new each time)
        out.assign(fn(*ts)).realize() if out.shape else fn(*ts).realize()

    run()
    run()
    time.sleep(0.3)  # the v8 engine's background compile (compile: tiered) finishes meanwhile
    t0 = now()
    run()
    one = now() - t0
    iters = max(3, min(2000, int(0.3 / max(one, 1e-6))))
    best = float("inf")
    for _ in range(rounds):
        t0 = now()
        for _ in range(iters):
            run()
        best = min(best, (now() - t0) / iters)
    # realises: 1 checked, 3 warm-up and probe, rounds * iters timed
    print(json.dumps({"err": err, "wall": best, "realises": 4 + rounds * iters}), flush=True)


def run_child(name, device, rounds, env, clock, compile_mode=None):
    if compile_mode:
        env = dict(env, POLYGRAD_CONFIG=env["POLYGRAD_CONFIG"] + "." + compile_mode)
    p = subprocess.run([sys.executable, __file__, "--child", name, device, str(rounds), clock],
                       env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"wasm.py: {name} on {device} failed:\n{p.stdout}\n{p.stderr}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    phases = {}
    for line in p.stderr.splitlines():
        if (g := PHASE.match(line)):
            phases[g[1]] = (float(g[2]) * 1e-3, int(g[3]))
    if "launch" not in phases:
        raise SystemExit(f"wasm.py: no POLYGRAD_TIMING lines from the child:\n{p.stderr}")
    out["phases"] = phases
    # the launch phase: each kernel's launch, and one synchronise per realise
    out["kernel"] = phases["launch"][0] / out["realises"]
    out["kernels"] = phases["launch"][1] // out["realises"] - 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="v8", help="the wasm plugin's engine (v8 or interp)")
    ap.add_argument("--compile", default="tiered,optimized",
                    help="the v8 engine's ways of compiling to run, comma-separated")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clock", choices=["wall", "process"], default="wall",
                    help="time the rounds by the wall clock or the child's CPU time")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]), args.child[3])
    if "POLYGRAD_LIB" not in os.environ:
        sys.exit("wasm.py: set POLYGRAD_LIB to libpolygrad's path (see the docstring)")
    work = tempfile.mkdtemp(prefix="pg_wasm_bench_")
    config = os.path.join(work, "polygrad.yaml")
    modes = [m for m in args.compile.split(",") if m] if args.engine == "v8" else [None]
    for mode in modes + [None]:
        with open(config + ("." + mode if mode else ""), "w") as f:
            f.write(f"devices:\n  cpu:\n    threads: 1\n    cache_dir: {work}/cache\n"
                    f"  wasm:\n    engine: {args.engine}\n"
                    + (f"    compile: {mode}\n" if mode else ""))
    env = dict(os.environ, POLYGRAD_CONFIG=config, POLYGRAD_TIMING="1", POLYGRAD_DEVICE="")
    cases = [c for c in args.cases.split(",") if c]
    clk = "proc" if args.clock == "process" else "wall"  # proc: the child's CPU time
    print(f"wasm ({args.engine} engine{', compile ' + modes[0] if modes[0] else ''}) against cpu (cpu_clang, 1 thread); ms per realise: "
          f"launch phase (mean), {'CPU time' if clk == 'proc' else 'wall'} (best of "
          f"{args.rounds} rounds); speed = cpu {clk} / wasm {clk}")
    print(f"{'case':36s} {'check':>5s} {'kernels':>7s} {'wasm ms':>9s} {'cpu ms':>9s} "
          f"{'wasm ' + clk:>9s} {'cpu ' + clk:>9s} {'speed':>6s}  target")
    renders, loads = [], {m: [] for m in modes}
    others = {}  # (case, mode) -> wasm time, for the modes after the first
    launch_cost = None
    for name in cases:
        ws = {m: run_child(name, "wasm", args.rounds, env, args.clock, m) for m in modes}
        w = ws[modes[0]]
        c = run_child(name, "cpu", args.rounds, env, args.clock)
        for m in modes[1:]:
            others[(name, m)] = (ws[m]["wall"], c["wall"] / ws[m]["wall"])
        speed = c["wall"] / w["wall"]
        flops = make_case(name, np.random.default_rng(0))[3]
        target = ""
        if name in TARGET:
            kind, value = TARGET[name]
            if kind == "speed":
                target = f">= {value}x native: {'met' if speed >= value else 'NOT met'}"
            else:
                rate = flops / w["wall"] / 1e9
                target = (f"{rate:.1f} GFLOP/s (cpu {flops / c['wall'] / 1e9:.1f}); >= {value}: "
                          f"{'met' if rate >= value else 'NOT met'}")
        check = "ok" if max(w["err"], c["err"]) < 1e-4 else f"{max(w['err'], c['err']):.0e}"
        print(f"{CASES[name]:36s} {check:>5s} {w['kernels']:>7d} {w['kernel'] * 1e3:9.4f} "
              f"{c['kernel'] * 1e3:9.4f} {w['wall'] * 1e3:9.4f} {c['wall'] * 1e3:9.4f} "
              f"{speed:6.2f}  {target}")
        for m in modes:
            r, l = ws[m]["phases"].get("render"), ws[m]["phases"].get("load")
            if r and l:
                renders.append((r[0], r[1]))
                loads[m].append((l[0], l[1]))
        if name == "launch":
            launch_cost = (w["kernel"], c["kernel"])
    for (name, m), (t, speed) in others.items():
        print(f"{CASES[name]:36s} wasm {clk} with compile {m}: {t * 1e3:.4f} ms, speed {speed:.2f}")
    if renders:
        rs, rn = sum(r[0] for r in renders), sum(r[1] for r in renders)
        print(f"\nper wasm kernel ({rn} kernels): render {rs / rn * 1e6:.1f} us (target <= 100)")
        for m in modes:
            ls, ln = sum(l[0] for l in loads[m]), sum(l[1] for l in loads[m])
            if ln:
                print(f"  load (compile and instantiate{', compile ' + m if m else ''}) "
                      f"{ls / ln * 1e3:.3f} ms (target <= 0.5)")
    if launch_cost:
        print(f"launch and synchronise of a 16-float kernel, as the host times them: wasm "
              f"{launch_cost[0] * 1e6:.2f} us, cpu {launch_cost[1] * 1e6:.2f} us")
    bench = os.path.join(os.path.dirname(os.environ["POLYGRAD_LIB"]), "..", "bin",
                         "bench_wasm_engine")
    if os.path.exists(bench):
        for m in modes:
            print(f"\n{os.path.normpath(bench)} (the plugin's own costs, through its C tables"
                  f"{'; v8 compile ' + m if m else ''}):")
            sys.stdout.flush()
            subprocess.run([bench, "--benchmark_repetitions=3",
                            "--benchmark_report_aggregates_only"], check=True,
                           env=dict(os.environ, POLYGRAD_TIMING="", POLYGRAD_WASM_COMPILE=m or ""))


if __name__ == "__main__":
    main()
