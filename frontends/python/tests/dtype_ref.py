"""Shared machinery of the dtype sweep (dtype_sweep.py) and its pytest guards
(test_dtypes_vs_torch.py): dtype tables, input generation, the torch reference, check() and
its record of results, and the op/case tables both iterate. Not a test file.

References:
- torch 1.13 (Debian's) is the reference. Where its cpu kernels lack float16/bfloat16 (exp,
  sin, matmul, cumsum, prod, ...), the op runs in float32 and the result is rounded to the
  half type.
- torch 1.13 has no uint32: uint32 tensors are stood in by int64 tensors; results whose
  expected dtype is uint32 are taken modulo 2**32, and the expected dtype comes from a torch-2
  style rule (uint32 with a float gives the float, with bool/uint8/uint32 gives uint32, with a
  signed int gives int64).
- Documented polygrad deviations (docs/tensor-api.md, the seed's Python API) are reported as
  'doc' rather than as failures: comparisons give float32 in Python, sums of bool and small
  ints accumulate in int32, mean of ints gives float32, an int scalar with a bool tensor
  gives int32 (torch: int64; a bool scalar keeps a bool tensor bool, as in torch).
- torch refuses some ops outright (bool subtraction, bool matmul in 1.13, ...). Each such
  refusal is listed in TORCH_REJECTS with the reason; a check whose torch call raises anything
  else is a failure ('torch-error'), never a skip: the harness must hand torch a call it takes.

Kinds of result (record()): 'pass', 'doc' (values compared with torch's, a reference's, or
where torch refuses as TORCH_REJECTS expects, its entry's stand-in's); 'rejected' (torch
refuses as expected and no stand-in: polygrad's dtype is checked where it is documented, its
values are not), 'both-reject' (polygrad refuses too), 'lacks' (polygrad refuses because the
default device does not declare one of the dtypes: the wasm device has no float16 and
bfloat16); failures: 'fail-value', 'fail-dtype', 'error' (polygrad raised), 'torch-error',
'crash'.
"""
import collections
import faulthandler
import functools
import re
import sys
import traceback
from typing import NamedTuple

import numpy as np
import torch

from polygrad import Device, Tensor

faulthandler.enable()
torch.set_num_threads(1)

DTYPES = ["bool", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
          "int64", "uint8", "uint32"]
FLOATS = ("float16", "bfloat16", "float32", "float64")
# The dtypes of DTYPES the default device does not declare.
LACKING = tuple(d for d in DTYPES if d not in Device.dtypes())
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint32")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint32")
NUMERIC = FLOATS + INTS
TD = {"bool": torch.bool, "float16": torch.float16, "bfloat16": torch.bfloat16,
      "float32": torch.float32, "float64": torch.float64, "int8": torch.int8,
      "int16": torch.int16, "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
      "uint32": torch.int64}  # uint32: int64 stand-in
NP = {"bool": np.bool_, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
      "float64": np.float64, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "uint8": np.uint8, "uint32": np.uint32}
TOL = {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2), "float32": (1e-4, 1e-5),
       "float64": (1e-9, 1e-12),
       # one unit in the last place (tol_dt= for results that must round like torch's)
       "float16-ulp": (2**-10, 1e-7), "bfloat16-ulp": (2**-7, 1e-7)}
RANGE = {"int8": (-128, 127), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
         "int64": (-2**63, 2**63 - 1), "uint8": (0, 255), "uint32": (0, 2**32 - 1)}


def tname(dt):
    return str(dt).replace("torch.", "")


def promote(a, b):
    """torch.promote_types over logical dtypes, extended to uint32 (torch 2 style)."""
    if "uint32" not in (a, b):
        return tname(torch.promote_types(TD[a], TD[b]))
    o = b if a == "uint32" else a
    if o in FLOATS:
        return o
    if o in ("bool", "uint8", "uint32"):
        return "uint32"
    return "int64"


def scalar_result(t, s):
    """torch's dtype for tensor(t) <op> python scalar s."""
    cat = {"bool": 0, "int": 1, "float": 2}
    k = "bool" if isinstance(s, bool) else "int" if isinstance(s, int) else "float"
    tc = 0 if t == "bool" else 1 if t in INTS else 2
    if cat[k] > tc:
        return "int64" if k == "int" else "float32"
    return t


def to_float_dtype(dt):
    return dt if dt in FLOATS else "float32"


# ---- value generation --------------------------------------------------------------------

RNG = np.random.default_rng(1234)


def round_to(vals, dt):
    """vals (float64 or int64 array) rounded/converted to what dtype dt can hold exactly."""
    if dt == "bool":
        return vals != 0
    if dt == "bfloat16":
        return torch.tensor(np.asarray(vals, np.float64)).to(torch.bfloat16).double().numpy()
    if dt in FLOATS:
        with np.errstate(over="ignore"):  # 70000 -> float16 is inf on purpose
            return np.asarray(vals, np.float64).astype(NP[dt]).astype(np.float64)
    return np.asarray(vals).astype(np.int64)


def gen(shape, dt, dom="any"):
    """Random values for dtype dt in a domain valid for the op."""
    if dt == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dt in FLOATS:
        lo, hi = {"any": (-3, 3), "pos": (0.5, 3), "small": (-2, 2), "unit": (-1.2, 1.2),
                  "nonzero": (0.5, 3), "nonneg": (0, 6), "base": (0.5, 2), "expo": (-2, 2),
                  "tiny": (-1, 1), "prod": (0.5, 1.5)}[dom]
        v = RNG.uniform(lo, hi, shape)
        if dom == "nonzero":
            v = v * RNG.choice([-1, 1], shape)
        return round_to(v, dt)
    uns = dt in UNSIGNED
    lo, hi = {"any": (0, 40) if uns else (-20, 20), "pos": (1, 20), "small": (0, 10) if uns
              else (-8, 8), "unit": (-1, 1) if not uns else (0, 1),
              "nonzero": (1, 9), "nonneg": (0, 6), "base": (0, 3), "expo": (0, 4),
              "tiny": (0, 2) if uns else (-2, 2), "prod": (0, 2) if uns else (-2, 2)}[dom]
    v = RNG.integers(lo, hi + 1, shape)
    if dom == "nonzero" and not uns:
        v = v * RNG.choice([-1, 1], shape)
    return v.astype(np.int64)


def mk_pg(vals, dt):
    if dt == "bfloat16":
        return Tensor(np.asarray(vals, np.float32)).cast("bfloat16")
    return Tensor(np.ascontiguousarray(np.asarray(vals).astype(NP[dt])))


def mk_th(vals, dt):
    if dt == "bool":
        return torch.tensor(np.asarray(vals, bool))
    if dt in FLOATS:
        return torch.tensor(np.asarray(vals, np.float64)).to(TD[dt])
    return torch.tensor(np.asarray(vals, np.int64)).to(TD[dt])


class In:
    """One tensor input: values and logical dtype."""

    def __init__(self, vals, dt):
        self.vals, self.dt = vals, dt


# ---- ops torch refuses ----------------------------------------------------------------------

def bools_as_int64(fn, args):
    """torch's fn with its bool tensors taken as int64 0 and 1, the result in the dtype torch
    promotes the tensors' own dtypes to (a bool matmul: any product true): the reference where
    torch refuses an op on bool tensors that polygrad computes."""
    wide = [a.to(torch.int64) if isinstance(a, torch.Tensor) and a.dtype == torch.bool else a
            for a in args]
    r = torch_ref(fn, wide)
    dtypes = [a.dtype for a in args if isinstance(a, torch.Tensor)]
    if len(dtypes) >= 2:
        r = r.to(functools.reduce(torch.promote_types, dtypes))
    return r


class Rejection(NamedTuple):
    """An op torch refuses: check()'s name and the inputs' dtypes as it joins them (regular
    expressions, matched whole), the exception's type and a fragment of its message, and why.
    stand_in(fn, torch args), when given, is the reference instead; without it polygrad's
    values go unchecked (and its dtype is checked only where documented)."""
    op: str
    dts: str
    exc: type
    fragment: str
    why: str
    stand_in: object = None


SUB = r"sub|2-t|2\.5-t|t-1"
TORCH_REJECTS = [
    # (polygrad refuses it too: 'both-reject')
    Rejection(SUB, r"bool,bool", RuntimeError, "with two bool tensors is not supported",
              "torch has no subtraction of two bool tensors (it points to ^)"),
    Rejection(SUB, r"bool|bool,\w+|\w+,bool", RuntimeError, "with a bool tensor is not supported",
              "torch has no subtraction with a bool tensor (it points to ~ and logical_not)",
              bools_as_int64),
    Rejection(r"pow", r"bool,bool", RuntimeError, "\"pow\" not implemented for 'Bool'",
              "torch 1.13 has no bool kernel for pow", bools_as_int64),
    Rejection(r"arg(max|min)(\(.*\))?", r"bool", RuntimeError, "not implemented for 'Bool'",
              "torch 1.13's cpu argmax and argmin have no bool kernel", bools_as_int64),
    Rejection(r"arg(max|min)(\(.*\))?", r"bool", RuntimeError, "does not support bool input",
              "torch 2's argmax and argmin refuse bool (torch.cuda, as seen with 2.11)",
              bools_as_int64),
    Rejection(r"matmul.*|dot.*", r"bool,bool", RuntimeError, "not implemented for 'Bool'",
              "torch 1.13's cpu matmul kernels (addmm, addmv, dot, bmm) have no bool kernel",
              bools_as_int64),
]


def expected_rejection(name, dts, e):
    """The TORCH_REJECTS entry that expects torch's exception `e` for check `name` on `dts`."""
    for r in TORCH_REJECTS:
        if re.fullmatch(r.op, name) and re.fullmatch(r.dts, dts) and isinstance(e, r.exc) \
                and r.fragment in str(e):
            return r
    return None


# ---- the check ---------------------------------------------------------------------------

RESULTS = []
TALLY = collections.Counter()  # every check's kind, over the whole run
SECTION = ["?"]
VERBOSE = "-v" in sys.argv
FAILURES = ("fail-value", "fail-dtype", "error", "torch-error", "crash")


def torch_ref(fn, args):
    try:
        return fn(*args)
    except RuntimeError as e:
        msg = str(e)
        half = [d for d in ("Half", "BFloat16") if d in msg]
        if not half:
            raise
    # torch 1.13's cpu kernel lacks the half type: run in float32 and round back
    halves = {a.dtype for a in args if isinstance(a, torch.Tensor)
              and a.dtype in (torch.float16, torch.bfloat16)}
    wide = any(isinstance(a, torch.Tensor) and a.dtype in (torch.float32, torch.float64)
               for a in args)
    up = [a.float() if isinstance(a, torch.Tensor) and a.dtype in
          (torch.float16, torch.bfloat16) else a for a in args]
    r = fn(*up)
    if r.dtype == torch.float32 and len(halves) == 1 and not wide:
        r = r.to(halves.pop())
    return r


def count(tally, r):
    """Adds result `r` (a RESULTS entry) to `tally`: its kind, and whether torch refused it
    as expected ('refused') and its values were compared all the same ('refused-compared')."""
    tally[r["kind"]] += 1
    if r["refused"]:
        tally["refused"] += 1
        tally["refused-compared"] += r["kind"] in ("pass", "doc")


def record(name, dts, kind, detail="", pg_dtype=None, exp_dtype=None, refused=False):
    RESULTS.append(dict(sec=SECTION[0], name=name, dts=dts, kind=kind, detail=detail,
                        pg_dtype=pg_dtype, exp_dtype=exp_dtype, refused=refused))
    count(TALLY, RESULTS[-1])
    if VERBOSE or kind in FAILURES:
        if VERBOSE or kind != "pass":
            print(f"  [{kind}] {SECTION[0]}:{name} {dts} pg={pg_dtype} exp={exp_dtype} {detail}",
                  flush=True)


def as_np(t):
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.detach().numpy()


def check(name, pg_fn, th_fn, ins, *, exp_dtype=None, udt=None, doc_dtype=None, tol_dt=None,
          ref=None):
    """pg_fn(*pg inputs) vs th_fn(*torch inputs). ins: In objects or python scalars.
    exp_dtype: expected dtype overriding torch's; udt: expected dtype where a uint32 input is
    stood in by int64; doc_dtype: polygrad's documented dtype where it differs from torch's;
    ref: a callable giving (values ndarray, dtype) instead of torch."""
    dts = ",".join(a.dt if isinstance(a, In) else repr(a) for a in ins)
    has_u32 = any(isinstance(a, In) and a.dt == "uint32" for a in ins)
    # reference
    rejection = None
    try:
        if ref is not None:
            rv, rdt = ref()
        else:
            targs = [mk_th(a.vals, a.dt) if isinstance(a, In) else a for a in ins]
            r = torch_ref(th_fn, targs)
            rv, rdt = as_np(r), tname(r.dtype)
    except Exception as e:  # torch refuses it: an expected refusal, or the harness is wrong
        rejection = None if ref is not None else expected_rejection(name, dts, e)
        if rejection is None:
            record(name, dts, "torch-error", f"{type(e).__name__}: {str(e)[:160]} (not in "
                   "TORCH_REJECTS: the harness must give torch a call it takes)")
            return
        rv, rdt = None, None
        if rejection.stand_in is not None:
            try:
                r = rejection.stand_in(th_fn, targs)
            except Exception as e2:
                record(name, dts, "torch-error", f"stand-in: {type(e2).__name__}: {e2}",
                       refused=True)
                return
            rv, rdt = as_np(r), tname(r.dtype)
    refused = rejection is not None
    if has_u32 and udt is not None:
        rdt = udt
    if exp_dtype is not None:
        rdt = exp_dtype
    if rdt == "uint32" and rv is not None:
        rv = np.asarray(rv).astype(np.int64) % 2**32
    # polygrad
    try:
        pargs = [mk_pg(a.vals, a.dt) if isinstance(a, In) else a for a in ins]
        out = pg_fn(*pargs)
        pdt = out.dtype
        pv = out.numpy()
    except Exception as e:
        lacks = any(f"lacks {d}," in str(e) for d in LACKING)
        kind = "both-reject" if refused else "lacks" if lacks else "error"
        record(name, dts, kind, f"{type(e).__name__}: {str(e)[:160]}", None, rdt, refused)
        return
    if rv is None:  # torch refuses it, no stand-in: polygrad's dtype where it is documented
        want = doc_dtype or exp_dtype
        kind = "rejected" if want is None or pdt == want else "fail-dtype"
        record(name, dts, kind, f"torch refuses: {rejection.why}", pdt, want, refused)
        return
    via = f"torch refuses ({rejection.why}): against its stand-in" if refused else ""
    rv = np.asarray(rv)
    problems = []
    if pv.shape != rv.shape:
        problems.append(f"shape {pv.shape} vs {rv.shape}")
    else:
        vdt = rdt if rdt in FLOATS else pdt if pdt in FLOATS else rdt
        if vdt in FLOATS or rv.dtype.kind == "f" or pv.dtype.kind == "f":
            rtol, atol = TOL[tol_dt or (vdt if vdt in FLOATS else "float32")]
            a, b = pv.astype(np.float64), rv.astype(np.float64)
            ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True) | (a == b)
        else:
            a, b = pv.astype(np.int64), rv.astype(np.int64)
            if pv.dtype == np.uint64:
                a = pv.astype(np.uint64).astype(object)
            ok = a == b
        if not np.all(ok):
            idx = np.argwhere(~np.asarray(ok))[:3]
            samp = "; ".join(f"{tuple(i)}: pg={np.asarray(pv)[tuple(i)]!r} "
                             f"ref={np.asarray(rv)[tuple(i)]!r}" for i in idx)
            problems.append(f"values ({int((~np.asarray(ok)).sum())}/{np.size(ok)} off) {samp}")
    if problems:
        record(name, dts, "fail-value", " | ".join(problems + ([via] if via else [])), pdt, rdt, refused)
    elif pdt != rdt:
        kind = "doc" if doc_dtype is not None and pdt == doc_dtype else "fail-dtype"
        record(name, dts, kind, via, pdt, rdt, refused)
    else:
        record(name, dts, "pass", via, pdt, rdt, refused)


def tally_of(results):
    """The counts of a list of RESULTS entries (see count())."""
    tally = collections.Counter()
    for r in results:
        count(tally, r)
    return tally


def tally_line(tally=None):
    """How many checks compared values and how many met a torch refusal TORCH_REJECTS
    expects, from `tally` (default: TALLY, the whole run's)."""
    t = TALLY if tally is None else tally
    failed = sum(t[k] for k in FAILURES)
    return (f"{t['pass'] + t['doc']} checks compared values ({t['pass']} pass, {t['doc']} "
            f"documented deviations; {t['refused-compared']} of them against a stand-in where "
            f"torch refuses), {t['refused']} met an expected torch refusal ({t['rejected']} "
            f"with polygrad's values unchecked, {t['both-reject']} refused by polygrad too), "
            f"{t['lacks']} on a dtype the device lacks, {failed} failed")


def guarded(fn):
    def run(*a, **k):
        try:
            fn(*a, **k)
        except Exception:
            record(fn.__name__, "", "crash", traceback.format_exc()[-300:])
    return run


# ---- op tables (the sweep's sections and the pytest guards iterate them) ------------------

# name, pg fn, torch fn, domain, dtypes, torch dtype rule for uint32 (u32 -> ?)
FLOAT_OUT = lambda d: to_float_dtype(d)  # noqa: E731
UNARY = [
    ("neg", lambda x: -x, lambda x: -x, "any", NUMERIC, lambda d: d),
    ("abs", lambda x: x.abs(), lambda x: x.abs(), "any", NUMERIC, lambda d: d),
    ("square", lambda x: x.square(), lambda x: x.square(), "small", NUMERIC, lambda d: d),
    ("sign", lambda x: x.sign(), lambda x: x.sign(), "any", NUMERIC, lambda d: d),
    ("relu", lambda x: x.relu(), lambda x: x.relu(), "any", NUMERIC, lambda d: d),
    ("exp", lambda x: x.exp(), lambda x: x.exp(), "tiny", DTYPES, FLOAT_OUT),
    ("exp2", lambda x: x.exp2(), lambda x: x.exp2(), "tiny", DTYPES, FLOAT_OUT),
    ("log", lambda x: x.log(), lambda x: x.log(), "pos", NUMERIC, FLOAT_OUT),
    ("log2", lambda x: x.log2(), lambda x: x.log2(), "pos", NUMERIC, FLOAT_OUT),
    ("sqrt", lambda x: x.sqrt(), lambda x: x.sqrt(), "nonneg", DTYPES, FLOAT_OUT),
    ("rsqrt", lambda x: x.rsqrt(), lambda x: x.rsqrt(), "pos", NUMERIC, FLOAT_OUT),
    ("reciprocal", lambda x: x.reciprocal(), lambda x: x.reciprocal(), "nonzero", NUMERIC,
     FLOAT_OUT),
    ("sin", lambda x: x.sin(), lambda x: x.sin(), "any", DTYPES, FLOAT_OUT),
    ("cos", lambda x: x.cos(), lambda x: x.cos(), "any", NUMERIC, FLOAT_OUT),
    ("tan", lambda x: x.tan(), lambda x: x.tan(), "unit", NUMERIC, FLOAT_OUT),
    ("tanh", lambda x: x.tanh(), lambda x: x.tanh(), "any", NUMERIC, FLOAT_OUT),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid(), "any", NUMERIC, FLOAT_OUT),
    ("ceil", lambda x: x.ceil(), lambda x: x.ceil(), "any", NUMERIC, lambda d: d),
    ("floor", lambda x: x.floor(), lambda x: x.floor(), "any", NUMERIC, lambda d: d),
    ("round", lambda x: x.round(), lambda x: x.round(), "any", NUMERIC, lambda d: d),
    ("trunc", lambda x: x.trunc(), lambda x: x.trunc(), "any", NUMERIC, lambda d: d),
    ("isnan", lambda x: x.isnan(), lambda x: x.isnan(), "any", DTYPES, lambda d: "bool"),
    ("isinf", lambda x: x.isinf(), lambda x: x.isinf(), "any", DTYPES, lambda d: "bool"),
    ("logical_not", lambda x: x.logical_not(), lambda x: x.logical_not(), "any", DTYPES,
     lambda d: "bool"),
    # (torch wraps a negative bound on an unsigned tensor, uint8's clamp(-3, 5) is 5
    # everywhere, where polygrad first brings bounds into the dtype's range: unsigned tensors
    # get non-negative bounds here, out-of-range bounds are checked in 'special' against numpy)
    ("clamp(-3,5)", lambda x: x.clamp(-3, 5), lambda x: x.clamp(-3, 5), "any",
     FLOATS + SIGNED, lambda d: d),
    ("clamp(2,5)", lambda x: x.clamp(2, 5), lambda x: x.clamp(2, 5), "any", NUMERIC,
     lambda d: d),
    ("relu6", lambda x: x.relu6(), lambda x: torch.nn.functional.relu6(x), "any", NUMERIC,
     lambda d: d),
    ("silu", lambda x: x.silu(), lambda x: torch.nn.functional.silu(x), "any", FLOATS, None),
    ("gelu", lambda x: x.gelu(), lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
     "any", FLOATS, None),
    ("softplus", lambda x: x.softplus(), lambda x: torch.nn.functional.softplus(x), "any",
     FLOATS, None),
    ("elu", lambda x: x.elu(), lambda x: torch.nn.functional.elu(x), "any", FLOATS, None),
    ("leaky_relu", lambda x: x.leaky_relu(0.1), lambda x: torch.nn.functional.leaky_relu(x, 0.1),
     "any", FLOATS, None),
    ("hardswish", lambda x: x.hardswish(), lambda x: torch.nn.functional.hardswish(x), "any",
     FLOATS, None),
    ("hardsigmoid", lambda x: x.hardsigmoid(), lambda x: torch.nn.functional.hardsigmoid(x),
     "any", FLOATS, None),
    ("mish", lambda x: x.mish(), lambda x: torch.nn.functional.mish(x), "any", FLOATS, None),
    ("hardtanh", lambda x: x.hardtanh(), lambda x: torch.nn.functional.hardtanh(x), "any",
     FLOATS, None),
]


BIN = [
    ("add", lambda a, b: a + b, "any", "any"),
    ("sub", lambda a, b: a - b, "any", "any"),
    ("mul", lambda a, b: a * b, "small", "small"),
    ("div", lambda a, b: a / b, "any", "nonzero"),
    ("pow", lambda a, b: a ** b, "base", "expo"),
    ("maximum", lambda a, b: a.maximum(b), "any", "any"),
    ("minimum", lambda a, b: a.minimum(b), "any", "any"),
    ("lt", lambda a, b: a < b, "tiny", "tiny"),
    ("le", lambda a, b: a <= b, "tiny", "tiny"),
    ("gt", lambda a, b: a > b, "tiny", "tiny"),
    ("ge", lambda a, b: a >= b, "tiny", "tiny"),
    ("eq", lambda a, b: a == b, "tiny", "tiny"),
    ("ne", lambda a, b: a != b, "tiny", "tiny"),
    ("bitwise_and", lambda a, b: a & b, "any", "any"),
    ("bitwise_or", lambda a, b: a | b, "any", "any"),
    ("bitwise_xor", lambda a, b: a ^ b, "any", "any"),
]
CMP = ("lt", "le", "gt", "ge", "eq", "ne")
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")


def bin_udt(name, a, b):
    p = promote(a, b)
    if name in CMP:
        return "bool"
    if name == "div":
        return to_float_dtype(p)
    return p


def tie(av, bv):
    """Makes about a third of b equal to a (for comparisons), broadcasting b's shape."""
    bv = np.array(bv)
    if bv.shape == np.shape(av):
        m = RNG.random(bv.shape) < 0.35
        bv[m] = np.asarray(av)[m]
    return bv


MIXED = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("maximum", lambda a, b: a.maximum(b)),
    ("minimum", lambda a, b: a.minimum(b)), ("lt", lambda a, b: a < b),
    ("eq", lambda a, b: a == b), ("pow", lambda a, b: a ** b),
    ("bitwise_and", lambda a, b: a & b), ("bitwise_xor", lambda a, b: a ^ b),
]


# name, pg fn (or (pg fn, torch fn)), the python scalar, input domain
SCALAR_OPS = [
    ("t+2", lambda t: t + 2, 2, "any"), ("t+2.5", lambda t: t + 2.5, 2.5, "any"),
    ("t+True", lambda t: t + True, True, "any"), ("t*True", lambda t: t * True, True, "any"),
    ("t*3", lambda t: t * 3, 3, "small"),
    ("t*0.5", lambda t: t * 0.5, 0.5, "any"), ("3*t", lambda t: 3 * t, 3, "small"),
    ("2-t", lambda t: 2 - t, 2, "any"), ("2.5-t", lambda t: 2.5 - t, 2.5, "any"),
    ("t-1", lambda t: t - 1, 1, "pos"), ("t/2", lambda t: t / 2, 2, "any"),
    ("t/0.5", lambda t: t / 0.5, 0.5, "any"), ("3/t", lambda t: 3 / t, 3, "nonzero"),
    ("1.5/t", lambda t: 1.5 / t, 1.5, "nonzero"), ("t**2", lambda t: t ** 2, 2, "small"),
    ("t**0.5", lambda t: t ** 0.5, 0.5, "nonneg"), ("2**t", lambda t: 2 ** t, 2, "expo"),
    ("1.5**t", lambda t: 1.5 ** t, 1.5, "expo"), ("t<2", lambda t: t < 2, 2, "any"),
    ("t<2.5", lambda t: t < 2.5, 2.5, "any"), ("t==2", lambda t: t == 2, 2, "any"),
    ("t>=0.5", lambda t: t >= 0.5, 0.5, "any"),
    # torch.maximum takes no python scalar: a 0-d tensor promotes the same way
    ("max(t,2)", (lambda t: t.maximum(2), lambda t: t.maximum(torch.tensor(2))), 2, "any"),
    ("max(t,1.5)", (lambda t: t.maximum(1.5), lambda t: t.maximum(torch.tensor(1.5))), 1.5,
     "any"),
    ("min(t,1)", (lambda t: t.minimum(1), lambda t: t.minimum(torch.tensor(1))), 1, "any"),
    ("t&3", lambda t: t & 3, 3, "any"), ("5|t", lambda t: 5 | t, 5, "any"),
    ("t^True", lambda t: t ^ True, True, "any"),
]

# where with one python scalar branch: name, pg fn, torch fn of (bool c, tensor t), the scalar
WHERE_SCALAR = [
    ("where(c,t,2)", lambda c, t: c.where(t, 2), lambda c, t: torch.where(c, t, 2), 2),
    ("where(c,2,t)", lambda c, t: c.where(2, t), lambda c, t: torch.where(c, 2, t), 2),
    ("where(c,1.5,t)", lambda c, t: c.where(1.5, t),
     lambda c, t: torch.where(c, torch.tensor(1.5), t), 1.5),
]


# ---- casts and reductions -----------------------------------------------------------------

CAST_FLOAT_VALS = [-3.7, -1.5, -0.5, -0.0, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7, 100.9, 127.4, -127.9]


def cast_src_values(src, dst):
    """Values of src that have a defined cast to dst."""
    if src == "bool":
        return np.array([True, False, True, True, False])
    if src in FLOATS:
        v = np.array(CAST_FLOAT_VALS + [1e3 + 0.7, -2e4 + 0.3, 65504.0, 70000.0, 1e-5, 3e-8,
                                        1.00048828125, 16777217.0, np.nan, np.inf, -np.inf])
        v = round_to(v, src)
        if dst in INTS:
            lo, hi = RANGE[dst]
            v = v[np.isfinite(v)]
            v = v[(v > lo - 1) & (v < hi + 1)]
            if dst in UNSIGNED:
                v = v[v >= 0]  # negative float -> unsigned is undefined in C (checked apart)
        return v
    lo, hi = RANGE[src]
    v = [0, 1, -1, 2, -2, 7, 100, -100, lo, hi, lo + 1, hi - 1, 255, 256, -129, 300, 65535,
         65536, 70000, 2049, 16777217, 2**31, 2**31 + 1, 2**32 - 1, 2**32 + 5, 2**53 + 1,
         2**40 + 3, -2**40 - 3]
    return np.array(sorted({x for x in v if lo <= x <= hi}), np.int64)


def ref_cast(vals, src, dst):
    t = mk_th(vals, src)
    if dst == "uint32":
        if src in FLOATS:
            r = t.double().trunc().to(torch.int64)
        else:
            r = t.to(torch.int64)
        return r.numpy() % 2**32, "uint32"
    r = t.to(TD[dst])
    return as_np(r), dst


def red_args(kind, axis, keepdim):
    """(polygrad fn, torch fn) for reduction `kind` over `axis` (None: all)."""
    def pg(t):
        return getattr(t, kind)(axis=axis, keepdim=keepdim) if axis is not None or keepdim \
            else getattr(t, kind)()

    def th(t):
        if kind in ("max", "min") and axis is not None:
            return getattr(t, kind)(dim=axis, keepdim=keepdim).values
        if kind == "cumsum":
            return t.cumsum(axis)
        if kind in ("argmax", "argmin"):
            return getattr(t, kind)(dim=axis, keepdim=keepdim)
        return getattr(t, kind)(dim=axis, keepdim=keepdim) if axis is not None else \
            getattr(t, kind)()
    return pg, th


# ---- special cases (the sweep's 'special' section and the pytest guards) -----------------

# (polygrad fn, torch fn) pairs where torch spells the op otherwise: its maximum and where take
# no python scalar (a 0-d tensor promotes the same way), and a cast is .to(dtype).
INT64_TENSOR_OPS = [
    (lambda t: t.maximum(0), lambda t: t.maximum(torch.tensor(0))),
    (lambda t: (t > 0).where(t, 0), lambda t: torch.where(t > 0, t, torch.tensor(0))),
    (lambda t: t.cast("float64"), lambda t: t.to(torch.float64)),
]
NAN_TENSOR_OPS = [
    (lambda t: t.maximum(0.5), lambda t: t.maximum(torch.tensor(0.5))),
    (lambda t: t.cast("bool"), lambda t: t.to(torch.bool)),
    (lambda t: t.cast("float64"), lambda t: t.to(torch.float64)),
    (lambda t: t.cast("float16"), lambda t: t.to(torch.float16)),
    (lambda t: t.cast("bfloat16"), lambda t: t.to(torch.bfloat16)),
]

# dtype, bases, a positive int scalar exponent (up to 64: products by squaring, exact and
# wrapping as torch's; through float64 7**20 was 79792266297611984 and int32's 3**21 -2**31)
INT_POW_SCALAR = [("int64", [94906267, 3037000499], 2), ("int64", [7, -7, 3], 20),
                  ("int64", [3, 2, -1], 64), ("int32", [3, -3, 2], 21), ("int16", [5, -7, 3], 9),
                  ("int8", [3, -2, 5], 5), ("uint8", [3, 2, 7], 8), ("uint32", [3, 7, 1], 23)]

# dtype, values, clamp bounds beyond the dtype's range: brought into it first (as uint8
# constants -1 wrapped to 255 and 300 to 44); torch rejects them, numpy's clip in int64 is the
# reference
CLAMP_WIDE = [("uint8", [0, 5, 255, 44], -1, 300), ("uint8", [0, 5, 255], -5, 7),
              ("int8", [-128, 5, 127], -200, 200), ("int8", [-128, 5, 127], -300, 3),
              ("int16", [-2**15, 7, 2**15 - 1], -40000, 40000),
              ("int32", [-2**31, 7, 2**31 - 1], -2**40, 2**40),
              ("uint32", [0, 7, 2**32 - 1], -1, 2**33)]


def clamp_ref(vals, dt, lo, hi):
    return np.clip(np.array(vals, np.int64), lo, hi).astype(NP[dt]), dt


# float16/bfloat16 activations are computed in float32 and rounded once, as torch's kernels
# mostly do: the reference is torch's float32 result rounded, within one unit in the last place
# (tol_dt "float16-ulp"/"bfloat16-ulp"). Rounded per op they were further off on these inputs
# (bfloat16's tanh(-0.01) was -0.0117, softplus(-6) 0); torch 1.13's own bfloat16
# gelu(approximate="tanh") rounds on the way too (gelu(-3.09) = -0, not -0.00269).
HALF_ACTS = [("sigmoid", torch.sigmoid), ("tanh", torch.tanh),
             ("gelu", lambda t: torch.nn.functional.gelu(t, approximate="tanh")),
             ("softplus", torch.nn.functional.softplus), ("mish", torch.nn.functional.mish),
             ("silu", torch.nn.functional.silu)]
HALF_ACT_VALUES = np.array([-7.25, -7.0, -6.0, -3.1, -0.7, -0.01, 0.3, 2.2])


def half_act_ref(f):
    return lambda t: f(t.float()).to(t.dtype)
