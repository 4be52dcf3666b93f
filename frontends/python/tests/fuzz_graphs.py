"""Differential fuzzing of polygrad's scheduler and codegen against torch.

Each seed gives a random program: a chain of 3-8 ops (elementwise, reductions, movement ops,
matmuls, convolutions, pools, cat/stack, gather, softmax/layernorm/cumsum, ...) over small
random shapes, whose operands are often views (transposed, sliced, padded, expanded, flipped,
strided) and whose values are often used by several consumers. The program runs on polygrad
and on torch (float32, and float64 as the reference for rounding), and the forward values and
the gradients of sum(out * u) with respect to every input are compared.

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
import math
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from polygrad import Tensor

torch.set_num_threads(1)

BATCH_SIZES = (1, 3, 7, 16, 33)
SIZES = [1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 9, 11, 12, 16, 17, 24, 31, 32, 33, 40]
SMALL = [1, 2, 3, 4, 5, 6, 7, 8]


# ---- symbolic shapes -------------------------------------------------------------------------

@dataclass(frozen=True)
class Sym:
    """An axis of c * B elements (B the batch size, chosen when the program runs)."""
    c: int = 1

    def __repr__(self):
        return "B" if self.c == 1 else f"{self.c}B"


def ev(shape, B):
    return tuple(d.c * B if isinstance(d, Sym) else d for d in shape)


def evd(d, B):
    return d.c * B if isinstance(d, Sym) else d


def issym(d):
    return isinstance(d, Sym)


def numel_max(shape, bmax):
    return math.prod(ev(shape, bmax))


def bcast(a, b):
    """Symbolic broadcast of two shapes, or None."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        else:
            return None
    return tuple(out)


# ---- op implementations: fn(L, xs, p, B) for L a Lib (polygrad or torch) ----------------------

class Lib:
    def __init__(self, kind):
        self.kind = kind  # "pg", "t32", "t64"
        self.pg = kind == "pg"
        self.dt = torch.float64 if kind == "t64" else torch.float32

    def leaf(self, arr):
        if self.pg:
            return Tensor(arr.copy(), requires_grad=True)
        return torch.tensor(arr, dtype=self.dt, requires_grad=True)

    def const(self, arr):
        if self.pg:
            return Tensor(arr.copy())
        return torch.tensor(arr, dtype=self.dt)

    def index(self, arr):
        if self.pg:
            return Tensor(arr.astype(np.int32), dtype="int32")
        return torch.tensor(arr.astype(np.int64))

    # pieces whose spelling differs
    def amax(self, x, axes, keepdim):
        return x.max(axes, keepdim) if self.pg else x.amax(axes, keepdim)

    def amin(self, x, axes, keepdim):
        return x.min(axes, keepdim) if self.pg else x.amin(axes, keepdim)

    def where(self, c, a, b):
        return c.where(a, b) if self.pg else torch.where(c, a, b)

    def pad(self, x, pairs, value=0.0):
        if self.pg:
            return x.pad(tuple(pairs), value)
        flat = []
        for lo, hi in reversed(pairs):
            flat += [lo, hi]
        return F.pad(x, tuple(flat), value=value)

    def shrink(self, x, bounds):
        if self.pg:
            return x.shrink(tuple(bounds))
        idx = tuple(slice(None) if b is None else slice(b[0], b[1]) for b in bounds)
        return x[idx]

    def cat(self, xs, dim):
        return Tensor.cat(*xs, dim=dim) if self.pg else torch.cat(xs, dim)

    def stack(self, xs, dim):
        return Tensor.stack(*xs, dim=dim) if self.pg else torch.stack(xs, dim)


def _axes_arg(axes):
    return axes[0] if len(axes) == 1 else tuple(axes)


UNARY = {
    "exp": lambda L, x, p: x.clip(-3, 3).exp(),
    "log": lambda L, x, p: (x.abs() + 0.5).log(),
    "sqrt": lambda L, x, p: (x * x + 0.25).sqrt(),
    "rsqrt": lambda L, x, p: (x * x + 0.25).rsqrt(),
    "relu": lambda L, x, p: x.relu(),
    "tanh": lambda L, x, p: x.tanh(),
    "sigmoid": lambda L, x, p: x.sigmoid(),
    "neg": lambda L, x, p: -x,
    "abs": lambda L, x, p: x.abs(),
    "sin": lambda L, x, p: x.sin(),
    "cos": lambda L, x, p: x.cos(),
    "affine": lambda L, x, p: x * p["a"] + p["b"],
    "square": lambda L, x, p: x.clip(-3, 3).square(),
    "recip": lambda L, x, p: (x.abs() + 1).reciprocal(),
    "leaky": lambda L, x, p: L.where(x > 0, x, x * 0.1),
    "gelu": lambda L, x, p: x.gelu() if L.pg else F.gelu(x, approximate="tanh"),
    "silu": lambda L, x, p: x.silu() if L.pg else F.silu(x),
    "softplus": lambda L, x, p: x.softplus() if L.pg else F.softplus(x),
    "maxc": lambda L, x, p: x.maximum(p["c"]) if L.pg else torch.clamp(x, min=p["c"]),
    "clamp": lambda L, x, p: x.clamp(p["lo"], p["hi"]),
    "pow": lambda L, x, p: (x.abs() + 0.5) ** 1.5,
    "hardtanh": lambda L, x, p: x.hardtanh() if L.pg else F.hardtanh(x),
}

BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (b.abs() + 0.5),
    # (b shifted: a and b are often equal in exact arithmetic, as x and the mean of copies of
    # x, and which one wins then depends on rounding, in torch as in polygrad)
    "maximum": lambda L, a, b: a.maximum(b + 0.0137) if L.pg else torch.maximum(a, b + 0.0137),
    "minimum": lambda L, a, b: a.minimum(b + 0.0137) if L.pg else torch.minimum(a, b + 0.0137),
    "where": lambda L, a, b: L.where(a > b + 0.0137, a, b * 0.5),
    "addmul": lambda L, a, b: a * 0.5 + b * b.tanh(),
}


# When set, every max/min reduce's input is realised first on polygrad (contiguous): the
# forward max and its gradient's comparison x == max then read the same values. A failure that
# goes away with it is the known recomputation bug (see check_program).
PIN_MAX = False


def _pin(L, x):
    return x.contiguous() if (PIN_MAX and L.pg) else x


def _reduce(L, x, p, B):
    name, axes, keep = p["name"], p["axes"], p["keep"]
    if name in ("max", "min"):
        x = _pin(L, x)
    if axes is None:
        if L.pg:
            return getattr(x, name)()
        return {"sum": x.sum, "mean": x.mean, "max": x.amax, "min": x.amin,
                "prod": x.prod}[name]()
    a = _axes_arg(axes)
    if name == "max":
        return L.amax(x, a, keep)
    if name == "min":
        return L.amin(x, a, keep)
    if name == "prod":  # torch's prod takes one axis
        if L.pg:
            return x.prod(a, keep)
        for ax in sorted((a % x.ndim for a in axes), reverse=True):
            x = x.prod(ax, keep)
        return x
    return getattr(x, name)(a, keep)


def _varstd(L, x, p, B):
    a = _axes_arg(p["axes"])
    if L.pg:
        return getattr(x, p["name"])(a, p["keep"], correction=p["corr"])
    return getattr(x, p["name"])(a, unbiased=bool(p["corr"]), keepdim=p["keep"])


def _norm(L, x, p, B):
    n, ax = p["name"], p["axis"]
    if n in ("softmax", "log_softmax", "logsumexp"):
        x = _pin(L, x)
    if n == "softmax":
        return x.softmax(ax)
    if n == "log_softmax":
        return x.log_softmax(ax)
    if n == "logsumexp":
        return x.logsumexp(ax, p["keep"]) if L.pg else x.logsumexp(ax, keepdim=p["keep"])
    if n == "cumsum":
        return x.cumsum(ax)
    if n == "layernorm":
        k = p["k"]
        if L.pg:
            return x.layernorm(tuple(range(-k, 0)), eps=1e-5)
        return F.layer_norm(x, tuple(x.shape[-k:]), eps=1e-5)
    raise KeyError(n)


def _rb(L, x, p, B):
    """A reduce broadcast back against its own input."""
    a = _axes_arg(p["axes"])
    n = p["name"]
    if n in ("scalemax", "submin"):
        x = _pin(L, x)
    if n == "center":
        return x - x.mean(a, True)
    if n == "normalize":
        return x / (x.abs().sum(a, True) + 1)
    if n == "scalemax":
        return x * L.amax(x, a, True)
    if n == "submin":
        return x - L.amin(x, a, True)
    raise KeyError(n)


def _reshape(L, x, p, B):
    return x.reshape(ev(p["shape"], B))


def _expand(L, x, p, B):
    return x.expand(ev(p["shape"], B))


def _permute(L, x, p, B):
    return x.permute(*p["perm"])


def _flip(L, x, p, B):
    return x.flip(tuple(p["axes"]))


def _pad(L, x, p, B):
    return L.pad(x, p["pairs"], p.get("value", 0.0))


def _shrink(L, x, p, B):
    return L.shrink(x, p["bounds"])


def _slice(L, x, p, B):
    ax, sl = p["axis"], slice(*p["slice"])
    if L.pg:
        return x[(slice(None),) * ax + (sl,)]
    n = x.shape[ax]
    idx = list(range(*sl.indices(n)))
    return x.index_select(ax, torch.tensor(idx, dtype=torch.int64))


def _intidx(L, x, p, B):
    return x[(slice(None),) * p["axis"] + (p["i"],)]


def _repeat(L, x, p, B):
    return x.repeat(*p["reps"])


def _contig(L, x, p, B):
    return x.contiguous() if L.pg else x


def _unary(L, x, p, B):
    return UNARY[p["name"]](L, x, p)


def _binary(L, a, b, p, B):
    return BINARY[p["name"]](L, a, b)


def _cat(L, *xs, p, B):
    return L.cat(list(xs), p["axis"])


def _stack(L, *xs, p, B):
    return L.stack(list(xs), p["axis"])


def _matmul(L, a, b, p, B):
    return a @ b


def _linear(L, x, w, b, p, B):
    return x.linear(w, b) if L.pg else F.linear(x, w, b)


def _gram(L, x, p, B):
    xt = x.transpose(-1, -2)
    return x @ xt if p["left"] else xt @ x


def _conv(L, x, w, b, p, B):
    if L.pg:
        return x.conv2d(w, b, groups=p["groups"], stride=p["stride"], dilation=p["dil"],
                        padding=p["pad"])
    return F.conv2d(x, w, b, stride=p["stride"], padding=p["pad"], dilation=p["dil"],
                    groups=p["groups"])


def _pool(L, x, p, B):
    k, s, pd = p["k"], p["stride"], p["pad"]
    if p["name"] == "max":
        x = _pin(L, x)
        if L.pg:
            return x.max_pool2d(k, stride=s, padding=pd)
        return F.max_pool2d(x, k, s, pd)
    if L.pg:
        return x.avg_pool2d(k, stride=s, padding=pd)
    return F.avg_pool2d(x, k, s, pd)


def _gather(L, x, idx, p, B):
    return x.gather(p["axis"], idx)


def _wherep(L, c, a, b, p, B):
    return L.where(c > 0, a, b)


APPLY = {
    "reduce": _reduce, "varstd": _varstd, "norm": _norm, "rb": _rb, "reshape": _reshape,
    "expand": _expand, "permute": _permute, "flip": _flip, "pad": _pad, "shrink": _shrink,
    "slice": _slice, "intidx": _intidx, "repeat": _repeat, "contig": _contig,
    "unary": _unary, "binary": _binary, "cat": _cat, "stack": _stack, "matmul": _matmul,
    "linear": _linear, "gram": _gram, "conv": _conv, "pool": _pool, "gather": _gather,
    "wherep": _wherep,
}


# ---- the generator ---------------------------------------------------------------------------

class Gen:
    """Builds a program: instrs = [(op, args, params, shape)], values numbered in order."""

    def __init__(self, seed, batch, max_numel):
        self.rng = np.random.default_rng(seed)
        self.batch = batch
        self.bmax = max(BATCH_SIZES) if batch else 1
        self.max_numel = max_numel
        self.instrs = []
        self.shapes = []
        self.is_input = []

    # helpers
    def r(self, n):
        return int(self.rng.integers(n))

    def chance(self, p):
        return self.rng.random() < p

    def choice(self, seq):
        return seq[self.r(len(seq))]

    def size(self, small=False):
        return int(self.choice(SMALL if small else SIZES))

    def ok(self, shape):
        return numel_max(shape, self.bmax) <= self.max_numel and len(shape) <= 6

    def emit(self, op, args, params, shape):
        self.instrs.append((op, tuple(args), params, tuple(shape)))
        self.shapes.append(tuple(shape))
        self.is_input.append(op in ("input", "index"))
        return len(self.shapes) - 1

    def inp(self, shape):
        return self.emit("input", (), {"lo": -2.0, "hi": 2.0}, shape)

    # an operand of a given shape, often a view of an input of another shape
    def operand(self, shape):
        shape = tuple(shape)
        k = self.r(9)
        nd = len(shape)
        conc = [i for i, d in enumerate(shape) if not issym(d)]
        if k == 1 and nd >= 2:
            perm = list(self.rng.permutation(nd))
            if perm == list(range(nd)):
                perm[-1], perm[-2] = perm[-2], perm[-1]
            # x.permute(perm) has shape[i] = src[perm[i]]
            src = [None] * nd
            for i in range(nd):
                src[perm[i]] = shape[i]
            v = self.inp(src)
            return self.emit("permute", (v,), {"perm": tuple(int(q) for q in perm)}, shape)
        if k == 2 and conc:
            bounds, big = [], list(shape)
            for i in range(nd):
                if i in conc and self.chance(0.6):
                    lo, hi = self.r(3), self.r(3)
                    big[i] = shape[i] + lo + hi
                    bounds.append((lo, lo + shape[i]))
                else:
                    bounds.append(None)
            if self.ok(big):
                v = self.inp(big)
                return self.emit("shrink", (v,), {"bounds": tuple(bounds)}, shape)
        if k == 3 and any(shape[i] > 1 for i in conc):
            pairs, small = [], list(shape)
            for i in range(nd):
                if i in conc and shape[i] > 1 and self.chance(0.7):
                    tot = 1 + self.r(min(3, shape[i] - 1))
                    lo = self.r(tot + 1)
                    pairs.append((lo, tot - lo))
                    small[i] = shape[i] - tot
                else:
                    pairs.append((0, 0))
            v = self.inp(small)
            return self.emit("pad", (v,), {"pairs": tuple(pairs)}, shape)
        if k == 4 and nd >= 1:
            small = [1 if (d != 1 and self.chance(0.5)) else d for d in shape]
            if tuple(small) != shape:
                v = self.inp(small)
                return self.emit("expand", (v,), {"shape": shape}, shape)
        if k == 5 and nd >= 1:
            axes = tuple(sorted(set(int(a) for a in self.rng.integers(0, nd, 1 + self.r(2)))))
            v = self.inp(shape)
            return self.emit("flip", (v,), {"axes": axes}, shape)
        if k == 6 and conc:
            i = self.choice(conc)
            step = self.choice([2, 3, -1, -2])
            big = list(shape)
            big[i] = shape[i] * abs(step) - self.r(abs(step))  # ceil(big / step) = shape[i]
            if self.ok(big):
                v = self.inp(big)
                sl = (None, None, step)
                return self.emit("slice", (v,), {"axis": i, "slice": sl}, shape)
        return self.inp(shape)

    # ---- ops on value v: each returns the new value index or None when not applicable ----

    def g_unary(self, v):
        name = self.choice(list(UNARY))
        p = {"name": name}
        if name == "affine":
            p["a"] = round(float(self.rng.uniform(-2, 2)), 3) or 0.5
            p["b"] = round(float(self.rng.uniform(-1, 1)), 3)
        if name == "maxc":
            p["c"] = round(float(self.rng.uniform(-1, 1)), 3) or 0.25
        if name == "clamp":
            lo = round(float(self.rng.uniform(-1.5, 0)), 3) - 0.01
            p["lo"], p["hi"] = lo, lo + round(float(self.rng.uniform(0.3, 2)), 3)
        return self.emit("unary", (v,), p, self.shapes[v])

    def _axes(self, nd, maxn=None):
        k = 1 + self.r(min(nd, maxn or 2))
        return tuple(sorted(int(a) for a in self.rng.choice(nd, k, replace=False)))

    def _neg(self, axes, nd):
        return tuple(a - nd if self.chance(0.3) else a for a in axes)

    def g_reduce(self, v):
        s = self.shapes[v]
        nd = len(s)
        name = self.choice(["sum", "mean", "max", "min", "sum", "mean", "prod"])
        if nd == 0 or self.chance(0.1):
            axes = None
            out = ()
        else:
            axes = self._axes(nd)
            keep = self.chance(0.5)
            out = tuple(1 if i in axes else d for i, d in enumerate(s)) if keep else \
                tuple(d for i, d in enumerate(s) if i not in axes)
        cnt = numel_max(s, self.bmax) if axes is None else \
            math.prod(evd(s[a], self.bmax) for a in axes)
        if name == "prod" and cnt > 6:
            name = "mean"
        p = {"name": name, "axes": None if axes is None else self._neg(axes, nd),
             "keep": False if axes is None else keep}
        return self.emit("reduce", (v,), p, out)

    def g_varstd(self, v):
        s = self.shapes[v]
        nd = len(s)
        if nd == 0:
            return None
        axes = self._axes(nd)
        keep = self.chance(0.5)
        cmin = math.prod(evd(s[a], 1) for a in axes)
        corr = 1 if (cmin > 1 and self.chance(0.6)) else 0
        name = "var" if self.chance(0.7) else "std"
        out = tuple(1 if i in axes else d for i, d in enumerate(s)) if keep else \
            tuple(d for i, d in enumerate(s) if i not in axes)
        return self.emit("varstd", (v,), {"name": name, "axes": axes, "keep": keep,
                                          "corr": corr}, out)

    def g_norm(self, v):
        s = self.shapes[v]
        nd = len(s)
        if nd == 0:
            return None
        name = self.choice(["softmax", "log_softmax", "logsumexp", "cumsum", "layernorm",
                            "softmax"])
        ax = self.r(nd) - (nd if self.chance(0.5) else 0)
        p = {"name": name, "axis": ax}
        out = s
        if name == "logsumexp":
            p["keep"] = self.chance(0.5)
            a = ax % nd
            out = tuple(1 if i == a else d for i, d in enumerate(s)) if p["keep"] else \
                tuple(d for i, d in enumerate(s) if i != a)
        if name == "layernorm":
            p["k"] = 1 + self.r(min(nd, 2))
        return self.emit("norm", (v,), p, out)

    def g_rb(self, v):
        s = self.shapes[v]
        if not s:
            return None
        axes = self._axes(len(s))
        return self.emit("rb", (v,), {"name": self.choice(["center", "normalize", "scalemax",
                                                           "submin"]),
                                      "axes": self._neg(axes, len(s))}, s)

    def g_reshape(self, v):
        s = list(self.shapes[v])
        nd = len(s)
        k = self.r(5)
        if k == 0 and nd >= 2:  # merge two adjacent axes
            i = self.r(nd - 1)
            a, b = s[i], s[i + 1]
            if issym(a) and issym(b):
                return None
            m = Sym(a.c * b) if issym(a) else Sym(a * b.c) if issym(b) else a * b
            new = s[:i] + [m] + s[i + 2:]
        elif k == 1 and nd >= 1:  # split an axis
            i = self.r(nd)
            d = s[i]
            n = d.c if issym(d) else d
            divs = [f for f in range(2, n + 1) if n % f == 0]
            if issym(d):
                divs.append(1)  # (c B) -> (B, c) or (c, B)
                f = self.choice(divs)
                parts = [Sym(n // f), f] if self.chance(0.5) else [f, Sym(n // f)]
                if f == 1:
                    parts = [Sym(1), n] if self.chance(0.5) else [n, Sym(1)]
            else:
                if not divs:
                    return None
                f = self.choice(divs)
                parts = [f, n // f]
            new = s[:i] + parts + s[i + 1:]
        elif k == 2:  # unsqueeze
            i = self.r(nd + 1)
            new = s[:i] + [1] + s[i:]
        elif k == 3 and 1 in s:  # squeeze
            i = self.choice([j for j, d in enumerate(s) if d == 1])
            new = s[:i] + s[i + 1:]
        elif k == 4 and nd >= 2 and sum(issym(d) for d in s) <= 1:  # flatten
            c = math.prod(d.c if issym(d) else d for d in s)
            new = [Sym(c) if any(issym(d) for d in s) else c]
        else:
            return None
        return self.emit("reshape", (v,), {"shape": tuple(new)}, new)

    def g_permute(self, v):
        s = self.shapes[v]
        if len(s) < 2:
            return None
        perm = tuple(int(q) for q in self.rng.permutation(len(s)))
        if perm == tuple(range(len(s))):
            perm = perm[1:] + perm[:1]
        return self.emit("permute", (v,), {"perm": perm}, tuple(s[q] for q in perm))

    def g_expand(self, v):
        s = list(self.shapes[v])
        if 1 not in s or self.chance(0.4):
            i = self.r(len(s) + 1)
            s = s[:i] + [1] + s[i:]
            v = self.emit("reshape", (v,), {"shape": tuple(s)}, s)
        new = [self.size(small=True) if d == 1 and self.chance(0.8) else d for d in s]
        if self.batch and self.chance(0.15):
            ones = [i for i, d in enumerate(new) if d == 1]
            if ones and not any(issym(d) for d in new):
                new[self.choice(ones)] = Sym(1)
        if not self.ok(new):
            return None
        return self.emit("expand", (v,), {"shape": tuple(new)}, new)

    def g_flip(self, v):
        s = self.shapes[v]
        if not s:
            return None
        return self.emit("flip", (v,), {"axes": self._axes(len(s), 3)}, s)

    def g_pad(self, v):
        s = self.shapes[v]
        if not s:
            return None
        pairs = []
        new = []
        for d in s:
            if self.chance(0.5):
                lo, hi = self.r(4), self.r(4)
            else:
                lo = hi = 0
            pairs.append((lo, hi))
            new.append(Sym(d.c) if issym(d) and lo + hi == 0 else d + lo + hi if not issym(d)
                       else None)
        if None in new:  # padding a symbolic axis: its size is no multiple of B any more
            return None
        if all(p == (0, 0) for p in pairs):
            i = self.choice([j for j, d in enumerate(s) if not issym(d)] or [None])
            if i is None:
                return None
            pairs[i] = (1, 2)
            new[i] = s[i] + 3
        if not self.ok(new):
            return None
        p = {"pairs": tuple(pairs)}
        if self.chance(0.2):
            p["value"] = 1.5
        return self.emit("pad", (v,), p, new)

    def g_shrink(self, v):
        s = self.shapes[v]
        cand = [i for i, d in enumerate(s) if not issym(d) and d > 1]
        if not cand:
            return None
        bounds, new = [], list(s)
        for i, d in enumerate(s):
            if i in cand and self.chance(0.6):
                a = self.r(d)
                b = a + 1 + self.r(d - a)
                if (a, b) != (0, d):
                    bounds.append((a, b))
                    new[i] = b - a
                    continue
            bounds.append(None)
        if all(b is None for b in bounds):
            i = self.choice(cand)
            bounds[i] = (1, s[i])
            new[i] = s[i] - 1
        return self.emit("shrink", (v,), {"bounds": tuple(bounds)}, new)

    def g_slice(self, v):
        s = self.shapes[v]
        cand = [i for i, d in enumerate(s) if not issym(d) and d > 1]
        if not cand:
            return None
        i = self.choice(cand)
        d = s[i]
        step = self.choice([2, 3, -1, -2, 2])
        start = self.choice([None, self.r(d), -1 - self.r(d)])
        stop = self.choice([None, None, self.r(d + 1)])
        n = len(range(*slice(start, stop, step).indices(d)))
        if n == 0:
            return None
        new = list(s)
        new[i] = n
        return self.emit("slice", (v,), {"axis": i, "slice": (start, stop, step)}, new)

    def g_intidx(self, v):
        s = self.shapes[v]
        cand = [i for i, d in enumerate(s) if not issym(d)]
        if not cand:
            return None
        i = self.choice(cand)
        k = self.r(s[i]) - (s[i] if self.chance(0.3) else 0)
        return self.emit("intidx", (v,), {"axis": i, "i": k}, s[:i] + s[i + 1:])

    def g_repeat(self, v):
        s = self.shapes[v]
        reps = [1 + self.r(3) if self.chance(0.5) else 1 for _ in s]
        extra = self.r(2)
        reps = [1 + self.r(2)] * extra + reps
        new = tuple(reps[:extra]) + tuple(
            Sym(d.c * r) if issym(d) else d * r for d, r in zip(s, reps[extra:]))
        if all(r == 1 for r in reps) or not self.ok(new):
            return None
        return self.emit("repeat", (v,), {"reps": tuple(reps)}, new)

    def g_contig(self, v):
        return self.emit("contig", (v,), {}, self.shapes[v])

    def g_binpool(self, v):
        s = self.shapes[v]
        cands = [j for j in range(len(self.shapes)) if not self.is_input[j] or self.chance(0.3)]
        cands = [j for j in cands if self.instrs[j][0] != "index" and bcast(s, self.shapes[j])
                 is not None and self.ok(bcast(s, self.shapes[j]))]
        if not cands:
            return None
        j = self.choice(cands)
        name = self.choice(list(BINARY))
        if j == v and name in ("maximum", "minimum", "where"):
            name = "mul"
        a, b = (v, j) if self.chance(0.6) else (j, v)
        return self.emit("binary", (a, b), {"name": name}, bcast(s, self.shapes[j]))

    def g_binfresh(self, v):
        s = self.shapes[v]
        o = [1 if self.chance(0.35) else d for d in s]
        drop = self.r(len(o) + 1) if self.chance(0.3) else 0
        o = o[drop:]
        w = self.operand(o)
        name = self.choice(list(BINARY))
        a, b = (v, w) if self.chance(0.5) else (w, v)
        return self.emit("binary", (a, b), {"name": name}, s)

    def g_cat(self, v):
        s = self.shapes[v]
        if not s:
            return None
        ax = self.r(len(s))
        if issym(s[ax]) and self.chance(0.5):
            return None
        pieces = [v]
        n = 1 + (self.r(2) if self.chance(0.3) else 0)
        for _ in range(n):
            k = self.r(3)
            if k == 0:
                pieces.append(v)
                continue
            o = list(s)
            o[ax] = self.size(small=True) if not issym(s[ax]) else s[ax]
            pieces.append(self.operand(o))
        self.rng.shuffle(pieces)
        pieces = [int(q) for q in pieces]
        tot = 0
        for q in pieces:
            d = self.shapes[q][ax]
            if issym(d):
                if tot and not issym(tot):
                    return None
                tot = Sym((tot.c if tot else 0) + d.c)
            else:
                if issym(tot):
                    return None
                tot += d
        new = list(s)
        new[ax] = tot
        if not self.ok(new):
            return None
        axp = ax - len(s) if self.chance(0.3) else ax
        return self.emit("cat", pieces, {"axis": axp}, new)

    def g_stack(self, v):
        s = self.shapes[v]
        same = [j for j in range(len(self.shapes)) if self.shapes[j] == s and
                self.instrs[j][0] != "index"]
        pieces = [v, self.choice(same) if self.chance(0.5) else self.operand(s)]
        if self.chance(0.3):
            pieces.append(v)
        ax = self.r(len(s) + 1)
        new = list(s[:ax]) + [len(pieces)] + list(s[ax:])
        if not self.ok(new):
            return None
        return self.emit("stack", pieces, {"axis": ax}, new)

    def g_matmul(self, v):
        s = self.shapes[v]
        if not s:
            return None
        k = self.r(4)
        if k == 0 or len(s) == 1:  # x @ W
            kk = s[-1]
            n = self.size()
            if issym(kk) and self.chance(0.5):
                return None
            wshape = (kk, n)
            out = s[:-1] + (n,)
            if not self.ok(out) or not self.ok(wshape):
                return None
            w = self.operand(wshape)
            return self.emit("matmul", (v, w), {}, out)
        if k == 1:  # W @ x
            m = self.size()
            wshape = (m, s[-2])
            if self.chance(0.3) and len(s) >= 3:
                wshape = s[:-2] + wshape
            out = s[:-2] + (m, s[-1])
            if not self.ok(out) or not self.ok(wshape):
                return None
            w = self.operand(wshape)
            return self.emit("matmul", (w, v), {}, out)
        if k == 2:  # Gram matrices: one value used twice
            left = self.chance(0.5)
            m = s[-2] if left else s[-1]
            out = s[:-2] + (m, m)
            if not self.ok(out):
                return None
            return self.emit("gram", (v,), {"left": left}, out)
        # linear with bias
        n = self.size()
        if issym(s[-1]):
            return None
        out = s[:-1] + (n,)
        if not self.ok(out):
            return None
        w = self.operand((n, s[-1]))
        b = self.operand((n,))
        return self.emit("linear", (v, w, b), {}, out)

    def _to4d(self, v):
        s = self.shapes[v]
        if len(s) == 4 and not any(issym(d) for d in s[1:]):
            return v
        return None

    def g_conv(self, v):
        v = self._to4d(v)
        if v is None:
            return None
        N, C, H, W = self.shapes[v]
        if C > 16:
            return None
        groups = self.choice([g for g in (1, 2, 3) if C % g == 0])
        cout = groups * (1 + self.r(4))
        kh, kw = 1 + self.r(3), 1 + self.r(3)
        stride = (1 + self.r(2), 1 + self.r(2))
        dil = (1 + (self.r(2) if self.chance(0.3) else 0), 1)
        pad = (self.r(2), self.r(3))
        oh = (H + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
        ow = (W + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
        if oh < 1 or ow < 1:
            return None
        out = (N, cout, oh, ow)
        if not self.ok(out):
            return None
        w = self.operand((cout, C // groups, kh, kw))
        b = self.operand((cout,)) if self.chance(0.5) else None
        args = (v, w, b) if b is not None else (v, w, -1)
        return self.emit("conv", args, {"groups": groups, "stride": stride, "dil": dil,
                                        "pad": pad}, out)

    def g_pool(self, v):
        v = self._to4d(v)
        if v is None:
            return None
        N, C, H, W = self.shapes[v]
        k = (1 + self.r(3), 1 + self.r(3))
        if k == (1, 1):
            k = (2, 2)
        stride = self.choice([None, (1, 1), (2, 2), (1, 2), k])
        st = k if stride is None else stride
        pad = (self.r(k[0] // 2 + 1), self.r(k[1] // 2 + 1))
        oh = (H + 2 * pad[0] - k[0]) // st[0] + 1
        ow = (W + 2 * pad[1] - k[1]) // st[1] + 1
        if oh < 1 or ow < 1:
            return None
        name = self.choice(["max", "avg"])
        return self.emit("pool", (v,), {"name": name, "k": k, "stride": stride or k,
                                        "pad": pad}, (N, C, oh, ow))

    def g_gather(self, v):
        s = self.shapes[v]
        cand = [i for i, d in enumerate(s) if not issym(d)]
        if not cand:
            return None
        ax = self.choice(cand)
        o = list(s)
        o[ax] = 1 + self.r(6)
        for i, d in enumerate(s):
            if i != ax and not issym(d) and d > 1 and self.chance(0.2):
                o[i] = 1 + self.r(d)
        if not self.ok(o):
            return None
        ix = self.emit("index", (), {"hi": s[ax]}, o)
        return self.emit("gather", (v, ix), {"axis": ax}, o)

    def g_wherep(self, v):
        s = self.shapes[v]
        c = self.operand([1 if self.chance(0.3) else d for d in s])
        o = self.operand(s) if self.chance(0.5) else v
        a, b = (v, o) if self.chance(0.5) else (o, v)
        return self.emit("wherep", (c, a, b), {}, s)

    OPS = [("unary", 5), ("reduce", 4), ("varstd", 1), ("norm", 3), ("rb", 3),
           ("reshape", 3), ("permute", 2), ("expand", 2), ("flip", 1), ("pad", 3),
           ("shrink", 2), ("slice", 2), ("intidx", 1), ("repeat", 1), ("contig", 1),
           ("binpool", 4), ("binfresh", 3), ("cat", 3), ("stack", 1), ("matmul", 4),
           ("conv", 3), ("pool", 2), ("gather", 1), ("wherep", 1)]

    def first_input(self):
        k = self.r(10)
        if k < 3:  # an image batch
            shape = [self.choice([1, 2, 3, 4]), self.choice([1, 2, 3, 4, 6]),
                     self.choice([3, 4, 5, 7, 8, 9, 12]), self.choice([3, 4, 5, 6, 7, 8, 11])]
        else:
            nd = self.choice([1, 2, 2, 2, 3, 3, 4])
            shape = [self.size() for _ in range(nd)]
            while numel_max(shape, 1) > self.max_numel // (self.bmax if self.batch else 1):
                shape[self.r(nd)] = self.choice([1, 2, 3, 5])
        if self.batch:
            shape[0] = Sym(1)
            while not self.ok(shape):
                i = self.r(len(shape) - 1) + 1 if len(shape) > 1 else 0
                if i == 0:
                    break
                shape[i] = max(1, shape[i] // 2)
        return self.operand(shape) if self.chance(0.3) else self.inp(shape)


def gen_program(seed, batch=None, max_numel=20000):
    """A random program for `seed`; batch=None lets the seed choose batch mode (1 in 3)."""
    rng = np.random.default_rng([seed, 99])
    if batch is None:
        batch = rng.random() < 1 / 3
    g = Gen(seed, batch, max_numel)
    v = g.first_input()
    depth = 3 + g.r(6)
    names = [n for n, _ in Gen.OPS]
    w = np.array([q for _, q in Gen.OPS], float)
    w /= w.sum()
    done = 0
    tries = 0
    while done < depth and tries < 200:
        tries += 1
        name = names[int(g.rng.choice(len(names), p=w))]
        nv = getattr(g, "g_" + name)(v)
        if nv is None:
            continue
        v = nv
        done += 1
    outs = [v]
    inner = [j for j in range(len(g.shapes)) if not g.is_input[j] and j != v]
    if inner and g.chance(0.3):
        outs.append(g.choice(inner))
    order = list(BATCH_SIZES)
    g.rng.shuffle(order)
    sizes = [int(b) for b in order[:g.r(3) + 3]] if batch else [1]
    if batch or g.chance(0.25):  # the same graph again (the schedule cache), other data
        sizes.append(sizes[0])
    return {"seed": seed, "batch": batch, "instrs": g.instrs, "outs": outs, "sizes": sizes,
            "realize_all": bool(g.chance(0.3))}


def describe(prog):
    lines = [f"seed {prog['seed']} batch={prog['batch']} sizes={prog['sizes']} "
             f"outs={prog['outs']} realize_all={prog['realize_all']}"]
    for i, (op, args, p, shape) in enumerate(prog["instrs"]):
        ps = ", ".join(f"{k}={v}" for k, v in p.items())
        a = ",".join(f"v{q}" if q >= 0 else "None" for q in args)
        lines.append(f"  v{i} = {op}({a}{'; ' if a and ps else ''}{ps}) -> {shape}")
    return "\n".join(lines)


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


def _close(name, got, r32, r64, tol):
    """got vs torch float32, allowing tol of the reference's scale plus 20x torch's own
    float32 rounding error at each element plus 10x its largest one in the array (a sum that
    cancels to about 0 has torch's rounding error at one element and ours at another)."""
    if got.shape != r32.shape:
        return f"{name}: shape {got.shape} != torch {r32.shape}"
    scale = max(1.0, float(np.max(np.abs(r64)))) if r64.size else 1.0
    noise = np.abs(r32 - r64)
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
        for k, (a, b, c) in enumerate(zip(pv, v32, v64)):
            m = _close(f"B={B} value of out {k} (v{prog['outs'][k]})", a, b, c, tol)
            if m:
                fails.append(m)
        for i in g32:
            m = _close(f"B={B} grad of v{i}", pg[i], g32[i], g64[i], tol * 10)
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
    global PIN_MAX
    tags = ""
    if prog["realize_all"] and not _fails(dict(prog, realize_all=False), B, tol):
        tags += "[realize_all only] "
    PIN_MAX = True
    try:
        if not _fails(prog, B, tol):
            tags += "[max recompute] "
        elif not tags and prog["realize_all"] and \
                not _fails(dict(prog, realize_all=False), B, tol):
            tags += "[realize_all only + max recompute] "
    finally:
        PIN_MAX = False
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
