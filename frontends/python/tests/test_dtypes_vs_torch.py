"""Non-float32 dtypes and dtype promotion against torch: values and result dtypes.

The checks that dtype_sweep.py found passing, on one shape each, as regression guards (the
sweep itself is the wider, standalone version; dtype_ref.py, whose check() both use, gives the
reference rules). Cases the sweep finds failing are left out here (they are listed in the
sweep's report), and so are polygrad's documented deviations from torch's dtypes, which are
accepted as documented: comparisons give float32 in Python, sums/prods/cumsums of bool and
small ints accumulate in 32 bits, argmax/argmin give int32, mean of ints gives float32, an int
scalar with a bool tensor gives int32. Where torch refuses an op, the refusal must be one that
dtype_ref.TORCH_REJECTS lists; the run ends with the counts (conftest.py)."""
import zlib

import numpy as np
import pytest
import torch

import dtype_ref as dref
from polygrad import Tensor
from dtype_ref import (BIN, BITWISE, CMP, DTYPES, FLOATS, INTS, In, UNARY, UNSIGNED,
                       WHERE_SCALAR, bin_udt, gen, promote, round_to, scalar_result,
                       to_float_dtype)

# 'rejected' and 'both-reject': torch refuses as dtype_ref.TORCH_REJECTS expects; any other
# torch exception is a 'torch-error', a failure. 'lacks': the default device does not declare
# one of the dtypes (dtype_ref.LACKING) and polygrad refuses the kernel saying so.
OK = ("pass", "doc", "rejected", "both-reject", "lacks")


@pytest.fixture(autouse=True)
def _seeded(request):
    """Each test draws its inputs from its own fixed seed (dtype_ref.RNG is module-global)."""
    dref.RNG = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    yield


def run(name, pg_fn, th_fn, ins, **kw):
    dref.RESULTS.clear()
    dref.check(name, pg_fn, th_fn, ins, **kw)
    r = dref.RESULTS[-1]
    assert r["kind"] in OK, (f"{name} [{r['dts']}]: {r['kind']} polygrad dtype={r['pg_dtype']} "
                             f"expected={r['exp_dtype']} {r['detail']}")


# ---- unary --------------------------------------------------------------------------------

@pytest.mark.parametrize("op", UNARY, ids=[u[0] for u in UNARY])
def test_unary(op):
    name, pf, tf, dom, dts, urule = op
    for dt in dts:
        run(name, pf, tf, [In(gen((3, 5), dt, dom), dt)], udt=urule(dt) if urule else None)


# ---- binary, same dtype -------------------------------------------------------------------

@pytest.mark.parametrize("op", BIN, ids=[b[0] for b in BIN])
def test_binary_same_dtype(op):
    name, f, da, db = op
    for dt in DTYPES:
        if name in BITWISE and dt in FLOATS:
            continue
        av, bv = gen((3, 5), dt, da), gen((5,), dt, db)
        if name in CMP:
            bv = gen((3, 5), dt, db)
            m = dref.RNG.random(bv.shape) < 0.35
            bv = np.where(m, av, bv)
        run(name, f, f, [In(av, dt), In(bv, dt)], exp_dtype="float32" if name in CMP else None,
            udt=bin_udt(name, dt, dt))


# ---- mixed dtypes (promotion) ---------------------------------------------------------------

MIXED_OPS = [("add", lambda a, b: a + b), ("mul", lambda a, b: a * b),
             ("div", lambda a, b: a / b), ("maximum", lambda a, b: a.maximum(b)),
             ("lt", lambda a, b: a < b), ("bitwise_or", lambda a, b: a | b)]


@pytest.mark.parametrize("a", DTYPES)
def test_mixed_promotion(a):
    for b in DTYPES:
        if a == b:
            continue
        for name, f in MIXED_OPS:
            if name == "bitwise_or" and (a in FLOATS or b in FLOATS):
                continue
            av = gen((3, 5), a, "nonneg")
            bv = gen((5,), b, "nonzero" if name == "div" else "nonneg")
            run(name, f, f, [In(av, a), In(bv, b)], exp_dtype="float32" if name in CMP else None,
                udt=bin_udt(name, a, b))
        c = gen((3, 5), "bool")
        run("where", lambda c, x, y: c.where(x, y), lambda c, x, y: torch.where(c, x, y),
            [In(c, "bool"), In(gen((3, 5), a, "nonneg"), a), In(gen((5,), b, "nonneg"), b)],
            udt=promote(a, b))


WIDE = [("int8", [100, -100, 127], "uint8", [200, 255, 3]),
        ("uint8", [255, 200, 0], "int16", [-300, 30000, 5]),
        ("int32", [2**31 - 1, -2**31, 5], "int64", [2**40, -2**40, 2**33]),
        ("int32", [2**31 - 1, -2**31, 5], "uint32", [2**32 - 1, 2**31, 7]),
        ("int32", [2049, 4097, -65519], "float16", [0.5, 1.0, 2.0]),
        ("int64", [2**53 + 1, 3, -7], "float64", [0.5, 1.0, 2.0]),
        ("float16", [60000.0, 1.0, 2.0], "float32", [60000.0, 0.5, 1e-4]),
        ("float16", [1.0, 2.0, 3.0], "bfloat16", [256.0, 1.0e10, 0.00390625]),
        ("bool", [True, False, True], "uint8", [255, 0, 7])]


@pytest.mark.parametrize("case", WIDE, ids=[f"{w[0]}-{w[2]}" for w in WIDE])
def test_promotion_before_the_op(case):
    """Values that only fit the promoted dtype: the op must not run in the narrower one."""
    a, av, b, bv = case
    av = round_to(np.array(av, np.float64 if a in FLOATS else np.int64), a)
    bv = round_to(np.array(bv, np.float64 if b in FLOATS else np.int64), b)
    for f in (lambda x, y: x + y, lambda x, y: x * y, lambda x, y: x.maximum(y)):
        run("wide", f, f, [In(av, a), In(bv, b)], udt=promote(a, b))
        run("wide", f, f, [In(bv, b), In(av, a)], udt=promote(a, b))


# ---- python scalars -----------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
def test_python_scalars(dt):
    for name, f, s, dom in dref.SCALAR_OPS:
        if any(c in name for c in "&|^") and dt in FLOATS:
            continue
        cmp = any(c in name for c in "<=>") and "max" not in name and "min" not in name
        sr = scalar_result(dt, s)
        if "/" in name:
            sr = to_float_dtype(sr)
        doc = "int32" if dt == "bool" and sr == "int64" else None
        pf, tf = f if isinstance(f, tuple) else (f, f)
        run(name, pf, tf, [In(gen((3, 5), dt, dom), dt)], exp_dtype="float32" if cmp else None,
            udt="float32" if cmp else sr, doc_dtype=doc)
    c, v = gen((3, 5), "bool"), gen((3, 5), dt, "any")
    for name, pf, tf, s in WHERE_SCALAR:
        sr = scalar_result(dt, s)
        run(name, pf, tf, [In(c, "bool"), In(v, dt)], udt=sr,
            doc_dtype="int32" if dt == "bool" and sr == "int64" else None)


# ---- casts --------------------------------------------------------------------------------

@pytest.mark.parametrize("src", DTYPES)
def test_cast_every_pair(src):
    """float -> int truncates toward zero; int -> int wraps; int -> float rounds to nearest;
    -> bool is != 0 (NaN too); NaN/inf between floats. Undefined casts are left out."""
    for dst in DTYPES:
        v = dref.cast_src_values(src, dst)
        run(f"cast->{dst}", lambda t, d=dst: t.cast(d), None, [In(v, src)],
            ref=lambda v=v, s=src, d=dst: dref.ref_cast(v, s, d), tol_dt="float64")
    if src in FLOATS:
        v = round_to(np.array([-1.0, -3.7, -100.5, -0.5]), src)
        run("cast-negative->uint8", lambda t: t.cast("uint8"), None, [In(v, src)],
            ref=lambda: dref.ref_cast(v, src, "uint8"))


def test_cast_float64_to_float16_rounds_once():
    v = np.array([1.00048828125001, 2049.0000001, 0.1, -65519.99, 1e-7])
    run("f64->f16", lambda t: t.cast("float16"), None, [In(v, "float64")],
        ref=lambda: (v.astype(np.float16), "float16"), tol_dt="float64")


# ---- reductions ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "mean", "argmax", "argmin",
                                  "cumsum"])
def test_reductions(kind):
    for dt in DTYPES:
        for axis in ([0, -1] if kind == "cumsum" else [None, 0, -1]):
            v = gen((3, 5), dt, "prod" if kind == "prod" else "any")
            if kind in ("argmax", "argmin") and dt != "bool":
                v = round_to(dref.RNG.permutation(15).reshape(3, 5), dt)
            pg, th = dref.red_args(kind, axis, axis == 0)
            if kind == "cumsum":
                pg = (lambda a: lambda t: t.cumsum(a))(axis)
                th = (lambda a: lambda t: t.cumsum(a))(axis)
            if kind in ("sum", "prod", "cumsum"):
                u = "int64" if dt in INTS or dt == "bool" else dt
                doc = ("uint32" if dt in UNSIGNED else
                       "int32" if dt in ("bool", "int8", "int16", "int32") else None)
            elif kind in ("argmax", "argmin"):
                u, doc = "int64", "int32"
            else:
                u, doc = dt, None
            if kind == "mean" and dt in INTS + ("bool",):
                run(kind, pg, None, [In(v, dt)], doc_dtype="float32",
                    ref=lambda v=v, th=th: (th(torch.tensor(np.asarray(v, np.float64))).numpy(),
                                            "float32"))
            else:
                run(kind, pg, th, [In(v, dt)], udt=u, doc_dtype=doc)


@pytest.mark.parametrize("dt", [d for d in DTYPES if d != "bool"])
def test_argmax_ties_first_index(dt):
    v = round_to(np.array([[1, 3, 3, 0, 3], [2, 2, 1, 2, 0], [0, 0, 0, 0, 0]]), dt)
    for kind in ("argmax", "argmin"):
        for axis in (None, 1, 0):
            pg, th = dref.red_args(kind, axis, False)
            run(kind, pg, th, [In(v, dt)], udt="int64", doc_dtype="int32")


@pytest.mark.parametrize("dt,n", [("float16", 4096), ("bfloat16", 1024)])
def test_half_accumulates_wide(dt, n):
    """2048 + 1 is 2048 in float16 (256 + 1 in bfloat16): sums must not accumulate in the half
    type."""
    v = np.ones(n)
    run("sum", lambda t: t.sum(), lambda t: t.sum(), [In(v, dt)])
    run("mean", lambda t: t.mean(), lambda t: t.mean(), [In(v, dt)])
    run("cumsum", lambda t: t.cumsum(0), lambda t: t.cumsum(0), [In(v, dt)])
    m = np.ones((4, n // 4))
    run("matmul", lambda a, b: a @ b, lambda a, b: a @ b, [In(m, dt), In(m.T.copy(), dt)])


# ---- matmul -------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [d for d in DTYPES if d != "bool"])
def test_matmul(dt):
    for sa, sb in [((3, 5), (5, 4)), ((17,), (17,)), ((2, 3, 5), (5, 4)), ((5,), (5, 4))]:
        run("matmul", lambda a, b: a @ b, lambda a, b: a @ b,
            [In(gen(sa, dt, "tiny"), dt), In(gen(sb, dt, "tiny"), dt)], udt=dt)


@pytest.mark.parametrize("a,b", [("int32", "float32"), ("float16", "float32"),
                                 ("int8", "uint8"), ("bfloat16", "float16"),
                                 ("int64", "float64")])
def test_matmul_mixed_promotes(a, b):
    p = promote(a, b)
    run("matmul", lambda x, y: x @ y,
        lambda x, y: (x.float() @ y.float()).half() if p == "float16" else
        x.to(dref.TD[p]) @ y.to(dref.TD[p]),
        [In(gen((3, 5), a, "tiny"), a), In(gen((5, 4), b, "tiny"), b)], udt=p)


# ---- special values -----------------------------------------------------------------------

WRAP = [("int8", [100, 127, -128], [100, 1, -1]), ("uint8", [250, 255, 3], [10, 1, 5]),
        ("int16", [32767, -32768, 200], [1, -1, 200]),
        ("int32", [2**31 - 1, -2**31, 2**16], [1, -1, 2**16]),
        ("int64", [2**63 - 1, -2**63, 2**32], [1, -1, 2**32]),
        ("uint32", [2**32 - 1, 0, 2**16], [1, 1, 2**16])]


@pytest.mark.parametrize("dt,av,bv", WRAP, ids=[w[0] for w in WRAP])
def test_integer_wraparound_like_numpy(dt, av, bv):
    x, y = np.array(av, dref.NP[dt]), np.array(bv, dref.NP[dt])
    with np.errstate(all="ignore"):
        for f in (lambda p, q: p + q, lambda p, q: p - q, lambda p, q: p * q):
            want = f(x, y)
            run("wrap", f, None, [In(x.astype(np.int64), dt), In(y.astype(np.int64), dt)],
                ref=lambda w=want: (w, w.dtype.name))
        for f, want in ((lambda p: -p, -x), (lambda p: p.abs(), np.abs(x))):
            run("wrap", f, None, [In(x.astype(np.int64), dt)],
                ref=lambda w=want: (w, w.dtype.name))


def test_small_int_pow_wraps():
    for a, b, dt in [([3, -2, 5], [5, 7, 3], "int8"), ([3, 2, 7], [6, 8, 3], "uint8"),
                     ([3, 5, -2], [19, 13, 31], "int32"), ([3, 2, 5], [21, 31, 13], "int32"),
                     ([7, -7, 94906267, 3], [20, 19, 2, 39], "int64"),
                     ([2, 1, -1, -1, 0], [-1, -5, -2, -3, -1], "int32")]:
        run("pow", lambda x, y: x ** y, lambda x, y: x ** y,
            [In(np.array(a), dt), In(np.array(b), dt)])


def test_int64_exact_ops():
    big = np.array([2**53 + 1, 2**62 + 3, -2**60 - 7])
    for f in (lambda t: t + 1, lambda t: t * 1, lambda t: t - 1, lambda t: t.max(),
              lambda t: t.cumsum(0), lambda t: -t, lambda t: t & (2**40 + 1),
              lambda t: t.square()):
        run("int64", f, f, [In(big, "int64")])
    # (torch's maximum and where take tensors only, and it spells cast .to)
    for pf, tf in dref.INT64_TENSOR_OPS:
        run("int64", pf, tf, [In(big, "int64")])
    run("sum", lambda t: t.sum(), lambda t: t.sum(), [In(np.array([2**53, 1, 1, 2**40]),
                                                         "int64")])


def test_float64_keeps_precision():
    x = np.array([1.0 + 1e-12, 1e-300, 3.0, 1e300, 0.1])
    for f in (lambda t: t - 1.0, lambda t: t * 3.0, lambda t: t / 3.0, lambda t: t.sqrt(),
              lambda t: t.log(), lambda t: t.sin(), lambda t: t ** 0.3, lambda t: t.sum(),
              lambda t: t.reciprocal(), lambda t: t.cumsum(0)):
        run("f64", f, f, [In(x, "float64")], tol_dt="float64")
    xf = np.random.default_rng(5).uniform(-50, 50, 64)
    for f in (lambda t: t.sin(), lambda t: (t / 2).exp(), lambda t: t.cos(), lambda t: t.tanh(),
              lambda t: t.sigmoid()):
        run("f64", f, f, [In(xf, "float64")], tol_dt="float64")


@pytest.mark.parametrize("dt", FLOATS)
def test_nan_inf(dt):
    nv = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    for f, exp in [(lambda t: t.max(), None), (lambda t: t.isnan(), None),
                   (lambda t: t.isinf(), None), (lambda t: t.sum(), None),
                   (lambda t: t.clamp(-1, 1), None), (lambda t: t == t, "float32"),
                   (lambda t: t.abs(), None), (lambda t: t.relu(), None)]:
        run("nan", f, f, [In(nv, dt)], exp_dtype=exp)
    for pf, tf in dref.NAN_TENSOR_OPS:
        run("nan", pf, tf, [In(nv, dt)])


def test_bool_arithmetic():
    bv, cv = np.array([True, False, True, False]), np.array([True, True, False, False])
    for f in (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a.maximum(b),
              lambda a, b: a.minimum(b), lambda a, b: a & b, lambda a, b: a | b,
              lambda a, b: a ^ b, lambda a, b: a / b):
        run("bool", f, f, [In(bv, "bool"), In(cv, "bool")])
    run("~bool", lambda a: ~a, lambda a: ~a, [In(bv, "bool")])


@pytest.mark.parametrize("dt", DTYPES)
def test_construct_with_dtype(dt):
    vals = [1.5, -2.0, 3.0] if dt in FLOATS else [1, 0, 3]
    for t in (Tensor(np.array(vals), dtype=dt), Tensor(vals, dtype=dt),
              Tensor(np.array(vals, np.float32), dtype=dt)):
        assert t.dtype == dt
        np.testing.assert_array_equal(t.numpy().astype(np.float64),
                                      np.array(vals, dref.NP[dt]).astype(np.float64))
    for ctor, want in [(lambda: Tensor.zeros(2, 3, dtype=dt), np.zeros((2, 3))),
                       (lambda: Tensor.ones(2, 3, dtype=dt), np.ones((2, 3))),
                       (lambda: Tensor.full((2, 3), 3, dtype=dt), np.full((2, 3), 3)),
                       (lambda: Tensor.arange(5, dtype=dt), np.arange(5)),
                       (lambda: Tensor.eye(3, dtype=dt), np.eye(3))]:
        t = ctor()
        assert t.dtype == dt
        np.testing.assert_array_equal(t.numpy().astype(np.float64),
                                      (want != 0 if dt == "bool" else want).astype(np.float64))



# ---- behaviour fixed after the first sweep (each test names what it pins) -----------------

@pytest.mark.parametrize("a,b", [("float16", "float16"), ("bfloat16", "bfloat16"),
                                 ("float16", "int32"), ("bfloat16", "uint8"),
                                 ("float16", "bool"), ("int64", "bfloat16")])
def test_half_pow_keeps_half(a, b):
    """A float16/bfloat16 power with a tensor exponent (or a tensor base) stays in the half
    type, as torch's (it gave float32)."""
    run("pow", lambda x, y: x ** y, lambda x, y: x ** y,
        [In(gen((3, 5), a, "base"), a), In(gen((5,), b, "expo"), b)], udt=promote(a, b))
    run("2**t", lambda t: 2 ** t, lambda t: 2 ** t, [In(gen((5,), a, "expo"), a)],
        udt=scalar_result(a, 2))


def test_bool_tensor_with_python_scalars():
    """A bool scalar keeps a bool tensor bool (torch's); an int scalar makes it int32
    (polygrad's documented rule, torch: int64), a float one float32; 3 / b divides by 1 and 0.
    (3 / b gave [1, inf]; b | 5, b & 3 and b.where(c, 2) gave bool; b + True, b * True int32.)"""
    b, c = np.array([True, False, True, False]), np.array([True, True, False, False])
    for f in (lambda t: 3 / t, lambda t: 1.5 / t, lambda t: t / 2, lambda t: t + True,
              lambda t: t * True, lambda t: True + t, lambda t: t ^ True, lambda t: t + 2.5):
        run("bool-scalar", f, f, [In(b, "bool")])
    for pf, tf in [(lambda t: t | 5, None), (lambda t: 5 | t, None), (lambda t: t & 3, None),
                   (lambda t: t + 2, None), (lambda t: 3 * t, None),
                   (lambda t: t.maximum(2), lambda t: t.maximum(torch.tensor(2)))]:
        run("bool-int-scalar", pf, tf or pf, [In(b, "bool")], doc_dtype="int32")
    run("where", lambda x, y: x.where(y, 2), lambda x, y: torch.where(x, y, 2),
        [In(b, "bool"), In(c, "bool")], doc_dtype="int32")
    run("where", lambda x, y: x.where(2, y), lambda x, y: torch.where(x, 2, y),
        [In(b, "bool"), In(c, "bool")], doc_dtype="int32")


@pytest.mark.parametrize("dt", INTS)
def test_invert_is_bitwise_not_on_ints(dt):
    """~ of an integer tensor is bitwise not, as torch's (it was logical not)."""
    lo, hi = dref.RANGE[dt]
    v = np.array([x for x in (0, 1, 2, 5, 100, -1, -3, lo, hi) if lo <= x <= hi])
    run("~", lambda t: ~t, lambda t: ~t, [In(v, dt)], udt=dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_invert_rejects_floats(dt):
    with pytest.raises(TypeError):
        ~dref.mk_pg(np.array([1.0, 0.0]), dt)


@pytest.mark.parametrize("case", dref.INT_POW_SCALAR, ids=[f"{c[0]}**{c[2]}"
                                                          for c in dref.INT_POW_SCALAR])
def test_int_pow_scalar_exponent_exact(case):
    """An integer tensor to a positive int scalar power (up to 64) is exact and wraps like
    torch's (it went through float64: 7**20 in int64 and 3**21 in int32 came out wrong)."""
    dt, a, n = case
    run("pow", lambda x: x ** n, lambda x: x ** n, [In(np.array(a), dt)], udt=dt)


@pytest.mark.parametrize("dt", FLOATS)
def test_argmax_argmin_of_nan(dt):
    """A NaN is the extreme: its (first) index, as torch's (it gave n, one past the end)."""
    v = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, -1.0, 5.0, 0.5], [np.nan, 4.0, -2.0, 1.0]])
    for kind in ("argmax", "argmin"):
        for axis in (None, 0, 1):
            pg, th = dref.red_args(kind, axis, False)
            run(kind, pg, th, [In(v, dt)], udt="int64", doc_dtype="int32")


@pytest.mark.parametrize("case", dref.CLAMP_WIDE, ids=[f"{c[0]}({c[2]},{c[3]})"
                                                      for c in dref.CLAMP_WIDE])
def test_int_clamp_bounds_beyond_the_dtype(case):
    """Bounds outside an int dtype's range are clipped to it first (uint8's clamp(-1, 300)
    gave 44s: the bounds had wrapped to 255 and 44)."""
    dt, v, lo, hi = case
    run("clamp", lambda t: t.clamp(lo, hi), None, [In(np.array(v), dt)],
        ref=lambda: dref.clamp_ref(v, dt, lo, hi))


@pytest.mark.parametrize("act", dref.HALF_ACTS, ids=[a[0] for a in dref.HALF_ACTS])
def test_half_activations_round_once(act):
    """float16/bfloat16 sigmoid, tanh, gelu, softplus, mish and silu are computed in float32
    and rounded once: within one unit in the last place of torch's float32 result rounded
    (per op in the half type, bfloat16's tanh(-0.01) was -0.0117 and softplus(-6) 0)."""
    name, tf = act
    for dt in ("float16", "bfloat16"):
        run(name, lambda t: getattr(t, name)(), dref.half_act_ref(tf),
            [In(round_to(dref.HALF_ACT_VALUES, dt), dt)], tol_dt=dt + "-ulp")


@pytest.mark.parametrize("to", ["uint8", "uint32"])
@pytest.mark.parametrize("frm", ["float16", "float32", "float64"])
def test_negative_float_to_unsigned_wraps_through_int64(frm, to):
    # C leaves it undefined; torch and numpy truncate to int64 and wrap: -3.7 -> -3 -> 2^n - 3.
    x = np.array([-3.7, 3.7, 300.2], dtype=frm)
    want = x.astype(np.int64).astype(to)
    got = Tensor(x).cast(to).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


HALF_ROW_OPS = [
    ("softmax", lambda t: t.softmax(-1), lambda t: t.softmax(-1)),
    ("log_softmax", lambda t: t.log_softmax(-1), lambda t: t.log_softmax(-1)),
    ("logsumexp", lambda t: t.logsumexp(-1), lambda t: t.logsumexp(-1)),
    ("pow", lambda t: t.abs() ** 1.7, lambda t: t.abs() ** 1.7),
    ("pow_tensor", lambda t: t.abs() ** (t * 0.3), lambda t: t.abs() ** (t * 0.3)),
]


@pytest.mark.parametrize("op", HALF_ROW_OPS, ids=[o[0] for o in HALF_ROW_OPS])
def test_half_softmax_and_pow_round_once(op):
    """float16/bfloat16 softmax, log_softmax, logsumexp and pow are worked in float32 and
    rounded once, as torch's: within one unit in the last place of torch's float32 result
    rounded (worked in float16, log_softmax and pow were off by two to three)."""
    name, pf, tf = op
    v = np.random.default_rng(zlib.crc32(name.encode())).uniform(-3, 3, (4, 33))
    for dt in ("float16", "bfloat16"):
        run(name, pf, dref.half_act_ref(tf), [In(round_to(v, dt), dt)], tol_dt=dt + "-ulp")
