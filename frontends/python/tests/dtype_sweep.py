"""Standalone dtype / promotion sweep: polygrad against torch (the reference for values and
result dtypes). Not a pytest file; run it with

    POLYGRAD_LIB=build/release/lib/libpolygrad.so python frontends/python/tests/dtype_sweep.py \
        [section ...] [-v]

Sections: unary binary mixed scalar cast reduce matmul special (default: all). It prints
one line per failing check (grouped), then counts per section. The reference rules, the
inputs and check() are in dtype_ref.py; test_dtypes_vs_torch.py keeps the passing cases as
pytest guards.
"""
import collections
import sys

import numpy as np
import torch

import dtype_ref as ref
from polygrad import Tensor
from dtype_ref import (BIN, BITWISE, CLAMP_WIDE, CMP, DTYPES, FLOATS, HALF_ACT_VALUES, HALF_ACTS,
                       In, INT64_TENSOR_OPS, INT_POW_SCALAR, INTS, MIXED, NAN_TENSOR_OPS, NP,
                       SCALAR_OPS, SECTION, RESULTS, TD, UNARY, UNSIGNED, WHERE_SCALAR, bin_udt,
                       cast_src_values, check, clamp_ref, gen, guarded, half_act_ref, mk_pg,
                       promote, record, red_args, ref_cast, round_to, scalar_result, tally_line,
                       tally_of, tie, to_float_dtype)

# ---- sections ----------------------------------------------------------------------------

SHAPES = [(3, 5), (17,)]


@guarded
def sec_unary():
    for name, pf, tf, dom, dts, urule in UNARY:
        for dt in dts:
            for sh in SHAPES:
                v = gen(sh, dt, dom)
                check(name, pf, tf, [In(v, dt)], udt=urule(dt) if urule else None)


@guarded
def sec_binary():
    for name, f, da, db in BIN:
        for dt in DTYPES:
            if name in BITWISE and dt in FLOATS:
                continue
            for sa, sb in [((3, 5), (5,)), ((17,), (17,))]:
                av, bv = gen(sa, dt, da), gen(sb, dt, db)
                if name in CMP:
                    bv = tie(av, bv)
                exp = "float32" if name in CMP else None  # the Python API's comparisons
                check(name, f, f, [In(av, dt), In(bv, dt)], exp_dtype=exp,
                      udt=bin_udt(name, dt, dt))


@guarded
def sec_mixed():
    for a in DTYPES:
        for b in DTYPES:
            if a == b:
                continue
            for name, f in MIXED:
                if name in BITWISE and (a in FLOATS or b in FLOATS):
                    continue
                dom_b = "nonzero" if name == "div" else "expo" if name == "pow" else "nonneg"
                dom_a = "base" if name == "pow" else "nonneg"
                av, bv = gen((3, 5), a, dom_a), gen((5,), b, dom_b)
                if name in ("lt", "eq"):
                    av = round_to(np.round(gen((3, 5), "float64", "nonneg")), a)
                    bv = round_to(np.round(gen((5,), "float64", "nonneg")), b)
                exp = "float32" if name in CMP else None
                check(name, f, f, [In(av, a), In(bv, b)], exp_dtype=exp,
                      udt=bin_udt(name, a, b))
            # where(cond, a, b)
            c = gen((3, 5), "bool")
            av, bv = gen((3, 5), a, "nonneg"), gen((5,), b, "nonneg")
            check("where", lambda c, x, y: c.where(x, y), lambda c, x, y: torch.where(c, x, y),
                  [In(c, "bool"), In(av, a), In(bv, b)], udt=promote(a, b))
    # values that need the promoted type (the op must not run in the narrower one)
    wide = [("int8", [100, -100, 127], "uint8", [200, 255, 3]),
            ("int8", [-128, 100, 1], "int16", [-32000, 32000, 7]),
            ("uint8", [255, 200, 0], "int16", [-300, 30000, 5]),
            ("int16", [32767, -32768, 3], "int32", [100000, -100000, 2**30]),
            ("int32", [2**31 - 1, -2**31, 5], "int64", [2**40, -2**40, 2**33]),
            ("uint8", [255, 250, 1], "uint32", [4294967040, 5, 7]),
            ("int32", [2**31 - 1, -2**31, 5], "uint32", [2**32 - 1, 2**31, 7]),
            ("int32", [2049, 4097, -65519], "float16", [0.5, 1.0, 2.0]),
            ("int32", [257, 16777217, 3], "bfloat16", [0.5, 1.0, 2.0]),
            ("int64", [2**53 + 1, 3, -7], "float64", [0.5, 1.0, 2.0]),
            ("int32", [16777217, 3, -7], "float32", [0.5, 1.0, 2.0]),
            ("float16", [60000.0, 1.0, 2.0], "float32", [60000.0, 0.5, 1e-4]),
            ("bfloat16", [3.0e38, 1.0, 2.0], "float32", [1.0e38, 1.0, 2.0]),
            ("float16", [1.0, 2.0, 3.0], "bfloat16", [256.0, 1.0e10, 0.00390625]),
            ("bool", [True, False, True], "uint8", [255, 0, 7])]
    for a, av, b, bv in wide:
        av, bv = round_to(np.array(av, np.float64 if a in FLOATS else np.int64), a), \
            round_to(np.array(bv, np.float64 if b in FLOATS else np.int64), b)
        for name, f in [("add", lambda x, y: x + y), ("mul", lambda x, y: x * y),
                        ("sub", lambda x, y: x - y), ("maximum", lambda x, y: x.maximum(y))]:
            if name == "sub" and "bool" in (a, b):
                continue
            for x, y, dx, dy in [(av, bv, a, b), (bv, av, b, a)]:
                check("wide-" + name, f, f, [In(x, dx), In(y, dy)], udt=promote(dx, dy))


@guarded
def sec_scalar():
    for dt in DTYPES:
        for name, f, s, dom in SCALAR_OPS:
            if any(c in name for c in "&|^") and dt in FLOATS:
                continue
            v = gen((3, 5), dt, dom)
            exp = "float32" if any(c in name for c in "<=>") and "max" not in name and \
                "min" not in name else None
            sr = scalar_result(dt, s)
            if "/" in name:
                sr = to_float_dtype(sr)
            doc = "int32" if dt == "bool" and sr == "int64" else None
            if exp:
                sr = exp
            pf, tf = f if isinstance(f, tuple) else (f, f)
            check(name, pf, tf, [In(v, dt)], exp_dtype=exp, udt=sr, doc_dtype=doc)
        # where with scalar branches
        c = gen((3, 5), "bool")
        v = gen((3, 5), dt, "any")
        for name, pf, tf, s in WHERE_SCALAR:
            sr = scalar_result(dt, s)
            doc = "int32" if dt == "bool" and sr == "int64" else None
            check(name, pf, tf, [In(c, "bool"), In(v, dt)], udt=sr, doc_dtype=doc)


@guarded
def sec_cast():
    for src in DTYPES:
        for dst in DTYPES:
            v = cast_src_values(src, dst)
            check(f"cast->{dst}", lambda t, d=dst: t.cast(d), None, [In(v, src)],
                  ref=lambda v=v, s=src, d=dst: ref_cast(v, s, d), tol_dt="float64")
    # negative float -> unsigned (undefined in C; torch and numpy wrap via int64)
    for src in FLOATS:
        for dst in UNSIGNED:
            v = round_to(np.array([-1.0, -3.7, -100.5, -0.5]), src)
            check(f"cast-negative->{dst}", lambda t, d=dst: t.cast(d), None, [In(v, src)],
                  ref=lambda v=v, s=src, d=dst: ref_cast(v, s, d))


@guarded
def sec_reduce():
    for dt in DTYPES:
        for sh in SHAPES:
            axes = [None, 0, -1] if len(sh) == 2 else [None, 0]
            for kind in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "cumsum"):
                for axis in axes + ([1] if len(sh) == 2 and kind == "sum" else []):
                    if kind == "cumsum" and axis is None:
                        continue
                    keeps = [False, True] if axis == 0 and kind in ("sum", "max", "argmax") \
                        else [False]
                    for keep in keeps:
                        dom = "prod" if kind == "prod" else "any"
                        v = gen(sh, dt, dom)
                        if kind in ("argmax", "argmin") and dt != "bool":
                            # distinct values (ties are checked in 'special')
                            n = int(np.prod(sh))
                            base = ref.RNG.permutation(n).reshape(sh)
                            v = round_to(base if dt in INTS else base * 0.25 - 2, dt)
                            if dt == "int8" or dt == "uint8":
                                v = round_to(base, dt)
                        pg, th = red_args(kind, axis, keep)
                        if kind == "cumsum":
                            pg = (lambda a: lambda t: t.cumsum(a))(axis)
                        name = f"{kind}(axis={axis}{',keep' if keep else ''})"
                        if kind in ("sum", "prod", "cumsum"):
                            u = "int64" if dt in INTS or dt == "bool" else dt
                            doc = "int32" if dt in ("bool", "int8", "int16", "int32",
                                                    "uint8") else None
                            if dt in ("uint8", "uint32"):
                                doc = "uint32"  # unsigned: 32-bit unsigned accumulator
                        elif kind == "mean":
                            u, doc = None, ("float32" if dt in INTS or dt == "bool" else None)
                        elif kind in ("argmax", "argmin"):
                            u, doc = "int64", "int32"
                        else:
                            u, doc = dt, None
                        if kind == "mean" and dt in INTS + ("bool",):
                            # torch rejects: reference = mean in float64, dtype float32 (doc)
                            check(name, pg, None, [In(v, dt)], doc_dtype=doc,
                                  ref=lambda v=v, th=th: (th(torch.tensor(
                                      np.asarray(v, np.float64))).numpy(), "float32"))
                        else:
                            check(name, pg, th, [In(v, dt)], udt=u, doc_dtype=doc)


@guarded
def sec_matmul():
    for dt in DTYPES:
        for sa, sb in [((3, 5), (5, 4)), ((17,), (17,)), ((2, 3, 5), (5, 4)), ((5,), (5, 4)),
                       ((3, 5), (5,)), ((2, 3, 5), (2, 5, 2))]:
            av, bv = gen(sa, dt, "tiny"), gen(sb, dt, "tiny")
            check(f"matmul{sa}@{sb}", lambda a, b: a @ b, lambda a, b: a @ b,
                  [In(av, dt), In(bv, dt)], udt=dt)
        av, bv = gen((4, 6), dt, "tiny"), gen((6, 3), dt, "tiny")
        check("dot(4,6)(6,3)", lambda a, b: a.dot(b), lambda a, b: a @ b,
              [In(av, dt), In(bv, dt)], udt=dt)
    # mixed dtypes: torch 1.13 rejects; polygrad's result dtype against torch.result_type
    for a, b in [("int32", "float32"), ("float16", "float32"), ("int8", "uint8"),
                 ("bfloat16", "float16"), ("int64", "float64"), ("int32", "int64")]:
        av, bv = gen((3, 5), a, "tiny"), gen((5, 4), b, "tiny")
        p = promote(a, b)
        check("matmul-mixed", lambda x, y: x @ y,
              lambda x, y: x.to(TD[p]) @ y.to(TD[p]) if p != "float16" else
              (x.float() @ y.float()).half(), [In(av, a), In(bv, b)], udt=p)


@guarded
def sec_special():
    # integer wraparound against numpy's
    wrap = [("int8", [100, 127, -128], "int8", [100, 1, -1]),
            ("uint8", [250, 255, 3], "uint8", [10, 1, 5]),
            ("int16", [32767, -32768, 200], "int16", [1, -1, 200]),
            ("int32", [2**31 - 1, -2**31, 2**16], "int32", [1, -1, 2**16]),
            ("int64", [2**63 - 1, -2**63, 2**32], "int64", [1, -1, 2**32]),
            ("uint32", [2**32 - 1, 0, 2**16], "uint32", [1, 1, 2**16])]
    for a, av, b, bv in wrap:
        x, y = np.array(av, NP[a]), np.array(bv, NP[b])
        with np.errstate(all="ignore"):
            for name, f in [("wrap-add", lambda p, q: p + q), ("wrap-sub", lambda p, q: p - q),
                            ("wrap-mul", lambda p, q: p * q)]:
                want = f(x, y)
                check(name, f, None, [In(x.astype(np.int64), a), In(y.astype(np.int64), b)],
                      ref=lambda w=want: (w, w.dtype.name))
            want = -x
            check("wrap-neg", lambda p: -p, None, [In(x.astype(np.int64), a)],
                  ref=lambda w=want: (w, w.dtype.name))
            want = np.abs(x)
            check("wrap-abs", lambda p: p.abs(), None, [In(x.astype(np.int64), a)],
                  ref=lambda w=want: (w, w.dtype.name))
    # argmax/argmin ties: torch gives the first index
    for dt in DTYPES:
        if dt == "bool":
            continue
        v = round_to(np.array([[1, 3, 3, 0, 3], [2, 2, 1, 2, 0], [0, 0, 0, 0, 0]]), dt)
        for kind in ("argmax", "argmin"):
            for axis in (None, 1, 0):
                pg, th = red_args(kind, axis, False)
                check(f"{kind}-ties(axis={axis})", pg, th, [In(v, dt)], udt="int64",
                      doc_dtype="int32")
    # half precision accumulation: torch accumulates in float32
    for dt, n in [("float16", 4096), ("bfloat16", 1024), ("float16", 3000)]:
        v = np.ones(n)
        check(f"sum-ones({n})", lambda t: t.sum(), lambda t: t.sum(), [In(v, dt)])
        check(f"mean-ones({n})", lambda t: t.mean(), lambda t: t.mean(), [In(v, dt)])
        check(f"cumsum-ones({n})", lambda t: t.cumsum(0), lambda t: t.cumsum(0), [In(v, dt)])
        m = np.ones((4, n // 4))
        check(f"matmul-ones({n // 4})", lambda a, b: a @ b, lambda a, b: a @ b,
              [In(m, dt), In(m.T.copy(), dt)])
    # large sums
    check("sum-int32-overflow", lambda t: t.sum(), lambda t: t.sum(),
          [In(np.full(8, 2**30), "int32")], doc_dtype="int32")
    check("sum-int64-big", lambda t: t.sum(), lambda t: t.sum(),
          [In(np.array([2**53, 1, 1, 2**40]), "int64")])
    check("sum-uint8-big", lambda t: t.sum(), lambda t: t.sum(),
          [In(np.full(17, 200), "uint8")], doc_dtype="uint32")
    check("prod-int8-big", lambda t: t.prod(), lambda t: t.prod(),
          [In(np.array([100, 100, 3]), "int8")], doc_dtype="int32")
    check("cumsum-int8-big", lambda t: t.cumsum(0), lambda t: t.cumsum(0),
          [In(np.array([100, 100, 100]), "int8")], doc_dtype="int32")
    check("mean-float16-big", lambda t: t.mean(), lambda t: t.mean(),
          [In(np.full(8, 30000.0), "float16")])
    check("sum-float16-overflow", lambda t: t.sum(), lambda t: t.sum(),
          [In(np.full(8, 30000.0), "float16")])
    # int64 beyond 2**53 (through python scalars, item(), max)
    big = np.array([2**53 + 1, 2**62 + 3, -2**60 - 7])
    for name, f in [("int64+1", lambda t: t + 1), ("int64*1", lambda t: t * 1),
                    ("int64+big", lambda t: t + (2**53 + 1)), ("int64-1", lambda t: t - 1),
                    ("int64 max", lambda t: t.max()),
                    ("int64==big", lambda t: t == (2**53 + 1)),
                    ("int64 cumsum", lambda t: t.cumsum(0)), ("int64 neg", lambda t: -t),
                    ("int64 clamp", lambda t: t.clamp(-2**61, 2**61 + 1)),
                    ("int64 &", lambda t: t & (2**40 + 1))]:
        exp = "float32" if "==" in name else None
        check(name, f, f, [In(big, "int64")], exp_dtype=exp)
    for name, (pf, tf) in zip(("int64 maximum(0)", "int64 where", "int64->float64"),
                              INT64_TENSOR_OPS):
        check(name, pf, tf, [In(big, "int64")])
    try:
        t = Tensor(np.array([2**53 + 1], np.int64))
        got = t.sum().item()
        record("int64 item()", "int64", "pass" if got == 2**53 + 1 else "fail-value",
               f"item()={got} want {2**53 + 1}", "int64", "int64")
        got = Tensor(np.array([2**53 + 1], np.int64)).tolist()[0]
        record("int64 tolist()", "int64", "pass" if got == 2**53 + 1 else "fail-value",
               f"tolist()={got}", "int64", "int64")
    except Exception as e:
        record("int64 item()", "int64", "error", repr(e))
    # scalars bigger than the tensor's dtype (torch: the tensor's dtype, the scalar wraps)
    check("int8+300", lambda t: t + 300, lambda t: t + 300, [In(np.array([1, -5, 100]), "int8")])
    check("uint8-1(scalar)", lambda t: t - 1, lambda t: t - 1, [In(np.array([0, 5, 255]), "uint8")])
    check("uint8*-1", lambda t: t * -1, lambda t: t * -1, [In(np.array([0, 5, 255]), "uint8")])
    check("float16+1e5", lambda t: t + 1e5, lambda t: t + 1e5,
          [In(np.array([0.0, -1e5, 1.0]), "float16")])
    check("int32+2**40", lambda t: t + 2**40, None, [In(np.array([1, 2]), "int32")],
          ref=lambda: (np.array([1 + 2**40, 2 + 2**40], np.int64).astype(np.int32), "int32"))
    # integer pow (torch multiplies; overflow wraps): a tensor exponent squares and
    # multiplies over its bits, exact and wrapping; ...
    for name, a, b, dt in [("int64 pow big", [7, -7, 94906267], [20, 19, 2], "int64"),
                           ("int32 pow overflow", [3, 2, 5], [21, 31, 13], "int32"),
                           ("int8 pow overflow", [3, -2, 5], [5, 7, 3], "int8"),
                           ("uint8 pow overflow", [3, 2, 7], [6, 8, 3], "uint8")]:
        check(name, lambda x, y: x ** y, lambda x, y: x ** y,
              [In(np.array(a), dt), In(np.array(b), dt)])
    # ... a positive int scalar exponent up to 64 multiplies by squaring: exact and wrapping
    for dt, a, n in INT_POW_SCALAR:
        check(f"{dt} ** {n} (scalar)", lambda x, n=n: x ** n, lambda x, n=n: x ** n,
              [In(np.array(a), dt)], udt=dt)
    check("int64 square", lambda x: x.square(), lambda x: x.square(),
          [In(np.array([94906267, 3037000499]), "int64")])
    # float64 -> half: numpy rounds once (torch 1.13 goes through float32 and can round twice)
    v = np.array([1.00048828125001, 2049.0000001, 1.0039062500001, 0.1, -65519.99, 1e-7])
    check("f64->f16 single rounding", lambda t: t.cast("float16"), None, [In(v, "float64")],
          ref=lambda: (v.astype(np.float16), "float16"), tol_dt="float64")
    # float64 precision kept (not computed in float32)
    x = np.array([1.0 + 1e-12, 1e-300, 3.0, 1e300, 0.1])
    for name, f in [("f64 sub", lambda t: t - 1.0), ("f64 mul", lambda t: t * 3.0),
                    ("f64 div", lambda t: t / 3.0), ("f64 sqrt", lambda t: t.sqrt()),
                    ("f64 exp2", lambda t: (t * 1e-3).exp2()), ("f64 log", lambda t: t.log()),
                    ("f64 sin", lambda t: t.sin()), ("f64 pow", lambda t: t ** 0.3),
                    ("f64 reciprocal", lambda t: t.reciprocal()),
                    ("f64 sum", lambda t: t.sum()), ("f64 mean", lambda t: t.mean()),
                    ("f64 cumsum", lambda t: t.cumsum(0))]:
        check(name, f, f, [In(x, "float64")], tol_dt="float64")
    xf = ref.RNG.uniform(-50, 50, 64)
    for name, f in [("f64 sin wide", lambda t: t.sin()), ("f64 exp wide", lambda t: (t / 2).exp()),
                    ("f64 cos wide", lambda t: t.cos()), ("f64 tanh", lambda t: t.tanh()),
                    ("f64 sigmoid", lambda t: t.sigmoid())]:
        check(name, f, f, [In(xf, "float64")], tol_dt="float64")
    # NaN / inf through half types and float ops
    nv = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    for dt in FLOATS:
        for name, (pf, tf) in zip(("nan maximum", "nan->bool"), NAN_TENSOR_OPS[:2]):
            check(name, pf, tf, [In(nv, dt)])
        for name, f in [("nan max", lambda t: t.max()),
                        ("nan isnan", lambda t: t.isnan()), ("nan sum", lambda t: t.sum()),
                        ("nan relu", lambda t: t.relu()), ("nan clamp", lambda t: t.clamp(-1, 1)),
                        ("nan ==", lambda t: t == t), ("nan sign", lambda t: t.sign()),
                        ("nan abs", lambda t: t.abs()), ("nan argmax", lambda t: t.argmax()),
                        ("nan argmin", lambda t: t.argmin())]:
            exp = "float32" if "==" in name else None
            doc = "int32" if "arg" in name else None
            check(name, f, f, [In(nv, dt)], exp_dtype=exp, doc_dtype=doc)
    # bool arithmetic
    bv = np.array([True, False, True, False])
    cv = np.array([True, True, False, False])
    for name, f in [("bool+bool", lambda a, b: a + b), ("bool*bool", lambda a, b: a * b),
                    ("bool max", lambda a, b: a.maximum(b)), ("bool&", lambda a, b: a & b),
                    ("bool|", lambda a, b: a | b), ("bool^", lambda a, b: a ^ b),
                    ("bool/bool", lambda a, b: a / b)]:
        check(name, f, f, [In(bv, "bool"), In(cv, "bool")])
    check("~bool", lambda a: ~a, lambda a: ~a, [In(bv, "bool")])
    # ~ of ints is bitwise not (torch's), of floats a TypeError
    for dt in INTS:
        check("~int", lambda a: ~a, lambda a: ~a, [In(gen((7,), dt, "any"), dt)], udt=dt)
    for dt in FLOATS:
        try:
            ~mk_pg(np.array([1.0, 0.0]), dt)
            record("~float raises TypeError", dt, "fail-value", "no error")
        except TypeError:
            record("~float raises TypeError", dt, "pass")
    # an int tensor's clamp bounds are brought into its dtype's range first
    for dt, v, lo, hi in CLAMP_WIDE:
        check(f"clamp({lo},{hi})", lambda t, lo=lo, hi=hi: t.clamp(lo, hi), None,
              [In(np.array(v), dt)], ref=lambda v=v, d=dt, lo=lo, hi=hi: clamp_ref(v, d, lo, hi))
    # float16/bfloat16 activations computed in float32 and rounded once
    for name, tf in HALF_ACTS:
        for dt in ("float16", "bfloat16"):
            check(f"{name} 1 ulp", lambda t, n=name: getattr(t, n)(), half_act_ref(tf),
                  [In(round_to(HALF_ACT_VALUES, dt), dt)], tol_dt=dt + "-ulp")
    # clamp with float bounds on ints (torch: result_type -> float32)
    check("int32 clamp(0.5, 2.5)", lambda t: t.clamp(0.5, 2.5), lambda t: t.clamp(0.5, 2.5),
          [In(np.array([0, 1, 2, 3]), "int32")])
    # ...even whole float bounds; int bounds keep int64 values beyond 2**53 exact
    check("int32 clamp(0.0, 2.0)", lambda t: t.clamp(0.0, 2.0), lambda t: t.clamp(0.0, 2.0),
          [In(np.array([-1, 1, 2, 3]), "int32")])
    check("int64 clamp(2**62+1, 2**62+5)", lambda t: t.clamp(2**62 + 1, 2**62 + 5),
          lambda t: t.clamp(2**62 + 1, 2**62 + 5),
          [In(np.array([2**62, 2**62 + 3, 2**62 + 9]), "int64")])
    # int64 values beyond 2**53 through construction
    big1 = 2**53 + 1
    for name, mkr in [("Tensor(int, dtype=int64)", lambda: Tensor(big1, dtype="int64")),
                      ("Tensor.full(int64)", lambda: Tensor.full((2,), big1, dtype="int64")),
                      ("Tensor(list, dtype=int64)", lambda: Tensor([big1, 1], dtype="int64")),
                      ("arange(int64)", lambda: Tensor.arange(big1, big1 + 2, dtype="int64")),
                      ("where(c, big, t)", lambda: Tensor(np.array([True, False])).where(
                          big1, Tensor(np.array([1, 2], np.int64)))),
                      ("full_like(int64)", lambda: Tensor(np.array([1, 2], np.int64))
                       .full_like(big1))]:
        try:
            got = mkr().numpy().reshape(-1)[0]
            record(name, "int64", "pass" if int(got) == big1 else "fail-value",
                   f"{int(got)} want {big1}", "int64", "int64")
        except Exception as e:
            record(name, "int64", "error", f"{type(e).__name__}: {e}")
    # Tensor(data, dtype=) for every dtype
    for dt in DTYPES:
        vals = [1.5, -2.0, 3.0] if dt in FLOATS else [1, 0, 3]
        try:
            t = Tensor(np.array(vals), dtype=dt)
            ok = t.dtype == dt
            record("Tensor(ndarray, dtype=)", dt, "pass" if ok else "fail-dtype", "", t.dtype, dt)
            t = Tensor(vals, dtype=dt)
            record("Tensor(list, dtype=)", dt, "pass" if t.dtype == dt else "fail-dtype", "",
                   t.dtype, dt)
            for ctor, mkr in [("zeros", lambda: Tensor.zeros(2, 3, dtype=dt)),
                              ("ones", lambda: Tensor.ones(2, 3, dtype=dt)),
                              ("full", lambda: Tensor.full((2, 3), 3, dtype=dt)),
                              ("arange", lambda: Tensor.arange(5, dtype=dt)),
                              ("eye", lambda: Tensor.eye(3, dtype=dt))]:
                t = mkr()
                want = {"zeros": np.zeros((2, 3)), "ones": np.ones((2, 3)),
                        "full": np.full((2, 3), 3), "arange": np.arange(5),
                        "eye": np.eye(3)}[ctor]
                if dt == "bool":
                    want = want != 0
                got = t.numpy()
                ok = t.dtype == dt and np.array_equal(got.astype(np.float64),
                                                      want.astype(np.float64))
                record(f"Tensor.{ctor}(dtype=)", dt, "pass" if ok else "fail-value",
                       "" if ok else f"{got!r}", t.dtype, dt)
        except Exception as e:
            record("Tensor(.., dtype=)", dt, "error", f"{type(e).__name__}: {e}")
    # item() types
    for dt in DTYPES:
        try:
            t = mk_pg(np.array([3]) if dt != "bool" else np.array([True]), dt).sum()
            it = t.item()
            want = torch.tensor([3 if dt != "bool" else True]).to(TD[dt]).sum().item()
            ok = type(it) is type(want) and it == want
            record("sum().item()", dt, "pass" if ok else "fail-value", f"{it!r} vs torch {want!r}",
                   t.dtype, None)
        except Exception as e:
            record("sum().item()", dt, "error", f"{type(e).__name__}: {e}")


SECTIONS = {"unary": sec_unary, "binary": sec_binary, "mixed": sec_mixed,
            "scalar": sec_scalar, "cast": sec_cast, "reduce": sec_reduce,
            "matmul": sec_matmul, "special": sec_special}


def main():
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or list(SECTIONS)
    for n in names:
        SECTION[0] = n
        print(f"== {n}", flush=True)
        SECTIONS[n]()
    print("\n== summary (section: kind counts)")
    by = collections.defaultdict(collections.Counter)
    for r in RESULTS:
        by[r["sec"]][r["kind"]] += 1
    for s, c in by.items():
        print(f"  {s}: " + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))
    tot = collections.Counter(r["kind"] for r in RESULTS)
    print("  total: " + ", ".join(f"{k}={v}" for k, v in sorted(tot.items())))
    print("  " + tally_line(tally_of(RESULTS)))
    print("\n== failures grouped by (section, check, kind, pg dtype, expected dtype)")
    groups = collections.defaultdict(list)
    for r in RESULTS:
        if r["kind"] in ref.FAILURES:
            key = (r["sec"], r["name"], r["kind"], r["pg_dtype"], r["exp_dtype"],
                   r["detail"][:60] if r["kind"] in ("error", "crash") else "")
            groups[key].append(r["dts"])
    for k, v in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        print(f"  {k[0]}:{k[1]} [{k[2]}] pg={k[3]} exp={k[4]} {k[5]} <- {sorted(set(v))}")
    docs = collections.Counter((r["sec"], r["name"].split("(")[0], r["pg_dtype"], r["exp_dtype"])
                               for r in RESULTS if r["kind"] == "doc")
    print("\n== documented deviations seen (count)")
    for k, v in sorted(docs.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())