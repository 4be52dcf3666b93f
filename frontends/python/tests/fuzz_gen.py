"""The program generator of fuzz_graphs.py.

Each seed gives a random program: a chain of 3-8 ops (elementwise, reductions, movement ops,
matmuls, convolutions, pools, cat/stack, gather, softmax/layernorm/cumsum, ...) over small
random shapes, whose operands are often views (transposed, sliced, padded, expanded, flipped,
strided) and whose values are often used by several consumers. The generator makes valid
programs only.

In batch mode (a third of the seeds, or all with batch=True) the program's leading axis is a
symbolic size B and the program lists several sizes to run it at (in a random order, the first
size once more at the end). A third of the programs realise their outputs and gradients with one
Tensor.realize_all.

A program is a dict: instrs = [(op, args, params, shape)] with values numbered in order (the ops
in fuzz_ops.APPLY, plus "input" and "index" leaves), outs, sizes, batch, realize_all, seed.
"""
import math

import numpy as np

from fuzz_ops import BINARY, UNARY, Sym, bcast, evd, issym, numel_max

BATCH_SIZES = (1, 3, 7, 16, 33)
SIZES = [1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 8, 9, 11, 12, 16, 17, 24, 31, 32, 33, 40]
SMALL = [1, 2, 3, 4, 5, 6, 7, 8]


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
