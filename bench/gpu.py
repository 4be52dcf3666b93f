"""polygrad on a GPU beside torch in the same process: issue 33's targets, one row per case.

    python3 bench/gpu.py [--device cuda] [--torch-device cuda] [--small] [--cases a,b]

Each case builds the same inputs (numpy, seed 0) on both sides, checks polygrad's result
against torch's once (ok / MISMATCH, with the error), then times each side: warm-up runs, then
the best of 3 rounds of N runs. A polygrad run is the graph built and realised; realize returns
after the device has finished (the host synchronises every device it used). A torch run is the
op, and each round ends with torch.cuda.synchronize(). TF32 is off on both sides. Columns:
polygrad and torch ms per run, speed (torch time / polygrad time, > 1 means polygrad is
faster), polygrad's rate (TFLOP/s, or TB/s of bytes read plus written) and issue 33's target.
The compile case runs fresh processes of this script (see compile_case).

Off a GPU: --device emu --torch-device cpu --small runs every case on the emulator as a check
of the script itself.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

# Each case: name -> (function(args) -> Row). Filled by the @case decorator below.
CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


class Row:
    def __init__(self, name, pg_s, torch_s, check, rate="", target="", met=None):
        self.name, self.pg_s, self.torch_s, self.check = name, pg_s, torch_s, check
        self.rate, self.target, self.met = rate, target, met


def best_time(run, sync, iters, warmup=2, rounds=3):
    """Seconds per run: the best of `rounds` rounds of `iters` runs, each round ended by sync."""
    for _ in range(warmup):
        run()
    sync()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(iters):
            run()
        sync()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def rel_error(got, want):
    """max |got - want| / max |want|, in float64 (0 when both are all zeros)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = max(float(np.abs(want).max()), 1e-30)
    return float(np.abs(got - want).max()) / scale


def check_text(err, tol):
    return f"ok ({err:.1e})" if err <= tol else f"MISMATCH ({err:.1e} > {tol:.0e})"


class Sides:
    """The two sides of a run: polygrad's device and torch's."""

    def __init__(self, args):
        import torch
        from polygrad import Tensor
        self.torch, self.Tensor = torch, Tensor
        self.dev, self.tdev, self.small = args.device, args.torch_device, args.small
        self.rng = np.random.default_rng(0)

    def tsync(self):
        if self.tdev.startswith("cuda"):
            self.torch.cuda.synchronize()

    def normal(self, *shape, scale=1.0):
        return (self.rng.standard_normal(shape, dtype=np.float32) * scale)

    def both(self, x, dtype="float32"):
        """x (float32 numpy) on both sides as `dtype`, rounded the same way (on each device)."""
        p = self.Tensor(x, device=self.dev)
        t = self.torch.tensor(x, device=self.tdev)
        if dtype != "float32":
            p = p.cast(dtype)
            t = t.to(getattr(self.torch, dtype))
        return p.realize(), t

    def iters(self, big, small):
        return small if self.small else big


def gemm(s, name, n, dtype, tol, target_tflops=None, target_speed=None):
    """a @ b, n x n, in `dtype`. The check's reference is torch's float32 product of the same
    rounded inputs (TF32 off), so it holds polygrad to float32 accumulation."""
    a_np, b_np = s.normal(n, n), s.normal(n, n)
    a, ta = s.both(a_np, dtype)
    b, tb = s.both(b_np, dtype)
    got = (a @ b).cast("float32").numpy()
    want = (ta.float() @ tb.float()).cpu().numpy()
    check = check_text(rel_error(got, want), tol)
    del got, want
    iters = s.iters(max(2, int(2e12 / (2 * n ** 3))), 2)
    pg = best_time(lambda: (a @ b).realize(), lambda: None, iters)
    try:
        tt = best_time(lambda: ta @ tb, s.tsync, iters)
    except RuntimeError as e:  # torch has no such matmul on this device (CPU f16 in old torch)
        tt, check = None, check + f" (torch: {str(e)[:60]})"
    tflops = 2 * n ** 3 / pg / 1e12
    if target_tflops is not None:
        return Row(name, pg, tt, check, f"{tflops:.1f} TFLOP/s", f">= {target_tflops} TFLOP/s",
                   tflops >= target_tflops)
    return Row(name, pg, tt, check, f"{tflops:.1f} TFLOP/s", f">= {target_speed}x torch",
               tt is not None and tt / pg >= target_speed)


@case("gemm_fp32_4096")
def gemm_fp32(s):
    n = 128 if s.small else 4096
    return gemm(s, f"gemm fp32 {n}", n, "float32", 1e-4, target_speed=0.7)


def _half_gemm(dtype, n_big):
    def run(s):
        n = n_big // 32 if s.small else n_big
        tol = 1e-2 if dtype == "float16" else 2e-2
        return gemm(s, f"gemm {'f16' if dtype == 'float16' else 'bf16'} {n}", n, dtype, tol,
                    target_tflops=300)
    return run


for _dt in ("float16", "bfloat16"):
    for _n in (4096, 8192):
        case(f"gemm_{'f16' if _dt == 'float16' else 'bf16'}_{_n}")(_half_gemm(_dt, _n))


@case("fma_64M")
def fma(s):
    n = (1 << 16) if s.small else (64 << 20)
    xs = [s.normal(n) for _ in range(3)]
    (a, ta), (b, tb), (c, tc) = (s.both(x) for x in xs)
    check = check_text(rel_error((a * b + c).numpy(), xs[0] * xs[1] + xs[2]), 1e-6)
    iters = s.iters(50, 3)
    pg = best_time(lambda: (a * b + c).realize(), lambda: None, iters)
    # torch.addcmul is one kernel (a*b+c in torch is two, with a temporary)
    tt = best_time(lambda: s.torch.addcmul(tc, ta, tb), s.tsync, iters)
    tbs = 4 * n * 4 / pg / 1e12
    return Row(f"a*b+c {n >> 20 or n}{'M' if n >> 20 else ''} f32", pg, tt, check,
               f"{tbs:.2f} TB/s", ">= 2.4 TB/s", tbs >= 2.4)


def rowwise(s, name, rows, cols, pg_fn, torch_fn, tol):
    x_np = s.normal(rows, cols, scale=3.0)
    x, tx = s.both(x_np)
    check = check_text(rel_error(pg_fn(x).numpy(), torch_fn(tx).cpu().numpy()), tol)
    iters = s.iters(50, 3)
    pg = best_time(lambda: pg_fn(x).realize(), lambda: None, iters)
    tt = best_time(lambda: torch_fn(tx), s.tsync, iters)
    tbs = 2 * rows * cols * 4 / pg / 1e12
    return Row(name, pg, tt, check, f"{tbs:.2f} TB/s", ">= 1.0x torch", tt / pg >= 1.0)


@case("softmax_4096")
def softmax(s):
    n = 64 if s.small else 4096
    return rowwise(s, f"softmax {n}x{n}", n, n, lambda x: x.softmax(-1),
                   lambda t: s.torch.softmax(t, -1), 1e-5)


@case("layernorm_4096")
def layernorm(s):
    n = 64 if s.small else 4096
    return rowwise(s, f"layernorm {n}x{n}", n, n, lambda x: x.layernorm(-1, 1e-5),
                   lambda t: s.torch.nn.functional.layer_norm(t, (t.shape[-1],), eps=1e-5), 1e-4)


@case("layernorm_bert")
def layernorm_bert(s):
    rows, cols = (32, 768) if s.small else (16 * 512, 768)  # BERT-base: batch 16, 512 tokens
    return rowwise(s, f"layernorm {rows}x{cols}", rows, cols, lambda x: x.layernorm(-1, 1e-5),
                   lambda t: s.torch.nn.functional.layer_norm(t, (cols,), eps=1e-5), 1e-4)


@case("mlp_train")
def mlp_train(s):
    """One SGD step of 784-128-10 with cross entropy, batch 256, the same weights both sides."""
    from polygrad.nn import SGD
    torch, T = s.torch, s.Tensor
    batch = 256
    x_np = s.normal(batch, 784)
    y_np = s.rng.integers(0, 10, batch).astype(np.int32)
    init = [s.normal(128, 784, scale=784 ** -0.5), s.normal(128, scale=0.05),
            s.normal(10, 128, scale=128 ** -0.5), s.normal(10, scale=0.05)]
    params = [T(w, device=s.dev, requires_grad=True).realize() for w in init]
    tparams = [torch.tensor(w, device=s.tdev, requires_grad=True) for w in init]
    x, y = T(x_np, device=s.dev).realize(), T(y_np, device=s.dev).realize()
    tx, ty = torch.tensor(x_np, device=s.tdev), torch.tensor(y_np, device=s.tdev).long()
    opt = SGD(params, lr=0.01)
    topt = torch.optim.SGD(tparams, lr=0.01)

    def step():
        w1, b1, w2, b2 = params
        opt.zero_grad()
        x.linear(w1, b1).relu().linear(w2, b2).cross_entropy(y).backward()
        opt.step()

    def tstep():
        w1, b1, w2, b2 = tparams
        topt.zero_grad()
        logits = torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(tx, w1, b1)),
                                            w2, b2)
        torch.nn.functional.cross_entropy(logits, ty).backward()
        topt.step()

    for _ in range(3):  # the same three steps, then the weights must agree
        step()
        tstep()
    err = max(rel_error(p.numpy(), t.detach().cpu().numpy()) for p, t in zip(params, tparams))
    check = check_text(err, 1e-4)
    iters = s.iters(50, 3)
    pg = best_time(step, lambda: None, iters)
    tt = best_time(tstep, s.tsync, iters)
    return Row("MLP 784-128-10 b256 SGD step", pg, tt, check, "", "<= 1.0x torch's time",
               pg <= tt)


# ---- compile latency: fresh processes of this script ------------------------------------------

COMPILE_KERNELS = 8  # distinct kernels timed per process


def compile_child(device, out_path):
    """In a fresh process: one warm-up kernel (device and context start-up), then
    COMPILE_KERNELS distinct kernels each realised once (first realize: schedule, codegen,
    render, compile or cache load, launch), then the first again (the process's own program
    cache: the host's floor). Writes the times (ms) as JSON."""
    from polygrad import Tensor, compiled_kernel_count
    x = Tensor(np.linspace(-1, 1, 4096, dtype=np.float32), device=device).realize()
    (x + 1).realize()
    graphs = [lambda i=i: ((x * (1.5 + i)).exp2() + (0.25 * i)).sqrt().realize()
              for i in range(COMPILE_KERNELS)]
    firsts, counts = [], []
    for g in graphs:
        before = compiled_kernel_count()
        t0 = time.perf_counter()
        g()
        firsts.append((time.perf_counter() - t0) * 1e3)
        counts.append(compiled_kernel_count() - before)
    t0 = time.perf_counter()
    graphs[0]()
    again = (time.perf_counter() - t0) * 1e3
    with open(out_path, "w") as f:
        json.dump({"first_ms": firsts, "kernels": counts, "again_ms": again}, f)


def plugin_options(prefix):
    """The option names the plugin serving `prefix` declares, from `polygrad devices --json`
    (the CLI on PATH, else this repo's build/release one); [] when there is no CLI."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cli = shutil.which("polygrad") or os.path.join(here, "build", "release", "bin", "polygrad")
    if not os.path.isfile(cli):
        return []
    out = subprocess.run([cli, "devices", "--json"], capture_output=True, text=True, timeout=60)
    for plugin in json.loads(out.stdout).get("plugins", []):
        if plugin.get("device_prefix") == prefix:
            return [o["key"] for o in plugin.get("options", [])]
    return []


def run_child(args, cache_dir, use_cache):
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        env = dict(os.environ)
        if cache_dir is not None:
            cfg = os.path.join(cache_dir, "polygrad.yaml")
            prefix = args.device.split(":")[0]
            with open(cfg, "w") as f:
                f.write(f"devices:\n  {prefix}:\n    cache: {str(use_cache).lower()}\n"
                        f"    cache_dir: \"{os.path.join(cache_dir, 'kernels')}\"\n")
            env["POLYGRAD_CONFIG"] = cfg
        subprocess.run([sys.executable, __file__, "--compile-child", out.name,
                        "--device", args.device], env=env, check=True, timeout=120)
        return json.load(out)


@case("compile")
def compile_case(s):
    """Cold: a fresh process with an empty kernel cache; cached: a second fresh process over the
    cache the first filled. Per kernel: the median first realize of COMPILE_KERNELS distinct
    kernels (host codegen included); the same graph realised again in-process is the floor."""
    prefix = s.dev.split(":")[0]
    has_cache = {"cache", "cache_dir"} <= set(plugin_options(prefix))
    with tempfile.TemporaryDirectory() as d:
        cold = run_child(ARGS, d if has_cache else None, True)
        warm = run_child(ARGS, d if has_cache else None, True)
    cold_ms, warm_ms = float(np.median(cold["first_ms"])), float(np.median(warm["first_ms"]))
    one_each = all(k == 1 for k in cold["kernels"] + warm["kernels"])
    check = "ok" if one_each else f"kernels per graph {cold['kernels']} / {warm['kernels']}"
    if not has_cache:
        check += f" (no cache options on {prefix}: both runs compile)"
    rows = [Row("cold compile, first realize per kernel", cold_ms / 1e3, None, check,
                f"{cold_ms:.1f} ms", "<= 60 ms", cold_ms <= 60),
            Row("cached kernel, first realize per kernel", warm_ms / 1e3, None, check,
                f"{warm_ms:.2f} ms (in-process hit {warm['again_ms']:.2f} ms)", "<= 1 ms",
                warm_ms <= 1)]
    return rows


# ---- main ------------------------------------------------------------------------------------

HEAD = (f"{'case':<40} {'polygrad ms':>12} {'torch ms':>10} {'speed':>7}  {'rate':<34} "
        f"{'target':<22} {'met':<4} check")


def print_row(r):
    tt = f"{r.torch_s * 1e3:10.3f}" if r.torch_s else f"{'-':>10}"
    speed = f"{r.torch_s / r.pg_s:6.2f}x" if r.torch_s else f"{'-':>7}"
    met = "-" if r.met is None else ("yes" if r.met else "NO")
    print(f"{r.name:<40} {r.pg_s * 1e3:12.3f} {tt} {speed}  {r.rate:<34} {r.target:<22} "
          f"{met:<4} {r.check}", flush=True)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda", help="polygrad's device (default cuda)")
    p.add_argument("--torch-device", default="cuda", help="torch's device (default cuda)")
    p.add_argument("--small", action="store_true", help="tiny sizes: a smoke run")
    p.add_argument("--cases", default="", help="comma-separated substrings of case names")
    p.add_argument("--compile-child", help=argparse.SUPPRESS)
    ARGS = args = p.parse_args()
    if args.compile_child:
        return compile_child(args.device, args.compile_child)
    import torch
    from polygrad import Device
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        name = Device.canonical(args.device)
    except Exception as e:  # noqa: BLE001 - the reason is printed; nothing can run
        print(f"bench/gpu.py: no device '{args.device}': {e}")
        print("\n".join(line for line in Device.report().split("\n") if line))
        return 2
    tname = torch.cuda.get_device_name() if args.torch_device.startswith("cuda") else "cpu"
    print(f"polygrad {name} | torch {torch.__version__} on {args.torch_device} ({tname})"
          f"{' | --small' if args.small else ''}")
    wanted = [c for c in args.cases.split(",") if c]
    s = Sides(args)
    print(HEAD + "\n" + "-" * len(HEAD), flush=True)
    failed = 0
    for key, fn in CASES.items():
        if wanted and not any(w in key for w in wanted):
            continue
        try:
            got = fn(s)
        except Exception as e:  # noqa: BLE001 - one case's failure must not hide the others
            got = Row(key, float("nan"), None, f"ERROR {type(e).__name__}: {e}"[:300])
            failed += 1
        for r in (got if isinstance(got, list) else [got]):
            failed += r.check.startswith("MISMATCH")
            print_row(r)
    return 1 if failed else 0


ARGS = None
if __name__ == "__main__":
    sys.exit(main())
