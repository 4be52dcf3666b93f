"""The ops of fuzz_graphs.py's programs, on polygrad or on torch.

Symbolic shapes (Sym: an axis of c * B elements, B the batch size chosen when a program runs),
Lib (the calls whose spelling differs, for polygrad or for torch in float32 or float64), and the
op implementations APPLY[op](L, *args, p=params, B=batch size), with the UNARY and BINARY tables
the generator (fuzz_gen.py) picks names from.
"""
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from polygrad import Tensor


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
        # "pg", "t32", "t64", or "t32c": float32 torch spelling out as composites the ops that
        # torch fuses and polygrad builds from others (layernorm), for the rounding error of
        # polygrad's formula.
        self.kind = kind
        self.pg = kind == "pg"
        self.composite = kind == "t32c"
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
            return x.pad(tuple(pairs), value=value)
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
# goes away with it is the known recomputation bug (classify() in fuzz_graphs.py sets it).
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
        if L.composite:
            axes = tuple(range(-k, 0))
            d = x - x.mean(axes, keepdim=True)
            return d * ((d * d).mean(axes, keepdim=True) + 1e-5).rsqrt()
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

