#include "codegen/transcendental.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "codegen/rebuild.hpp"

namespace polygrad::codegen {

namespace {

struct Fmt {
  DType t, it;  // the float type and the int type of its size
  int bias, mbits;
  bool dbl;
};

Fmt fmt_of(DType t) {
  bool dbl = t.scalar() == PG_DTYPE_FLOAT64;
  return dbl ? Fmt{t, dtypes::int64, 1023, 52, true} : Fmt{t, dtypes::int32, 127, 23, false};
}

UOpRef c(const Fmt& f, double v) {
  return const_float(f.t, v);
}
UOpRef ci(const Fmt& f, int64_t v) {
  return const_int(f.it, v);
}
UOpRef is_nan(const UOpRef& x) {
  return ne(x, x);
}
UOpRef horner(const UOpRef& x, const std::vector<double>& coeffs, const Fmt& f) {
  UOpRef acc = c(f, coeffs.back());
  // MULACC: one fused multiply-add per step where the target fuses (half the ops on the cpu).
  for (size_t i = coeffs.size() - 1; i-- > 0;) acc = alu(Op::MULACC, {acc, x, c(f, coeffs[i])});
  return acc;
}
/// round(x) to nearest, ties away from zero, as a float.
UOpRef round_(const UOpRef& x, const Fmt& f) {
  return alu(Op::TRUNC, {x + where(lt(x, c(f, 0.0)), c(f, -0.5), c(f, 0.5))});
}
/// 2^n for an int n of f's int type with bias+n a normal exponent.
UOpRef pow2(const UOpRef& n, const Fmt& f) {
  return UOp::make(Op::BITCAST, f.t, {alu(Op::SHL, {n + ci(f, f.bias), ci(f, f.mbits)})});
}

/// x clamped to [-lim, lim] with compares, not MAX: a NaN x goes through as 0 (the callers
/// return x itself for it).
UOpRef clamp_(const UOpRef& x, double lim, const Fmt& f) {
  UOpRef xc = where(lt(x, c(f, -lim)), c(f, -lim), where(lt(c(f, lim), x), c(f, lim), x));
  return where(is_nan(x), c(f, 0.0), xc);
}
/// 1.5 * 2^mbits: y plus this, minus this, is round(y) for |y| <= 2^(mbits-1) (ties to even).
UOpRef magic(const Fmt& f) {
  return c(f, 1.5 * std::ldexp(1.0, f.mbits));
}
/// round(y) by adding and subtracting magic: two adds (round_ takes four).
UOpRef round_magic(const UOpRef& y, const Fmt& f) {
  return (y + magic(f)) - magic(f);
}
/// The Taylor coefficients of e^(s r) in r: s^i / i!, degree 7 for float32, 13 for float64.
std::vector<double> exp_series(double s, const Fmt& f) {
  std::vector<double> k;
  double term = 1.0;
  for (int i = 0; i <= (f.dbl ? 13 : 7); ++i) {
    k.push_back(term);
    term *= s / (i + 1);
  }
  return k;
}
/// p * 2^nf for an integral float nf with |nf| <= the clamp's limit, NaN where x is NaN.
UOpRef scale_(const UOpRef& p, const UOpRef& nf, const UOpRef& x, const Fmt& f) {
  UOpRef n = cast(nf, f.it);
  UOpRef n1 = alu(Op::SHR, {n, ci(f, 1)});
  UOpRef n2 = n - n1;
  return where(is_nan(x), x, p * pow2(n1, f) * pow2(n2, f));
}
double exp2_limit(const Fmt& f) {
  return f.dbl ? 1100.0 : 160.0;
}

UOpRef exp2_(const UOpRef& x, const Fmt& f) {
  UOpRef xc = clamp_(x, exp2_limit(f), f);
  UOpRef nf = round_magic(xc, f);
  return scale_(horner(xc - nf, exp_series(std::numbers::ln2, f), f), nf, x, f);
}

/// e^x, the decomposition of EXP2(x * log2(e)). Rounding x * log2(e) first would cost up to
/// |x| ulps (its error in the exponent, 2^-24 |x| log2(e), grows with |x|). Instead, Cody-Waite:
/// n = round(x log2(e)), r = x - n ln2 with ln2 = c1 + c2, c1 short enough that n c1 and
/// x - n c1 are exact; e^x = 2^n e^r, |r| <= ln2/2 (and a little), by its Taylor polynomial.
UOpRef exp_(const UOpRef& x, const Fmt& f) {
  const long double ln2 = std::numbers::ln2_v<long double>;
  // c1: ln2 to 13 bits (float32: n c1 fits 21 of 24 bits for |n| <= 160) or 40 (float64:
  // 51 of 53 bits for |n| <= 1100); c2: the rest, from a long double ln2.
  const double c1 =
      std::ldexp(std::floor(std::ldexp(double(ln2), f.dbl ? 40 : 13)), f.dbl ? -40 : -13);
  const double c2 = double(ln2 - (long double)c1);
  UOpRef xc = clamp_(x, exp2_limit(f) * std::numbers::ln2, f);
  // Multiply-adds where the target fuses them: round(x log2(e)) need not see the product
  // rounded, and x - n c1 is exact either way.
  UOpRef nf = alu(Op::MULACC, {xc, c(f, std::numbers::log2e), magic(f)}) - magic(f);
  UOpRef r = alu(Op::MULACC, {nf, c(f, -c1), xc});
  r = alu(Op::MULACC, {nf, c(f, -c2), r});
  return scale_(horner(r, exp_series(1.0, f), f), nf, x, f);
}

/// For EXP2(x * k) with k = +-log2(e) as the multiply's dtype rounds it: -x or x (then the
/// node is e^x); else null.
UOpRef exp_argument(const UOp& exp2) {
  const UOpRef& m = exp2.src(0);
  if (m->op() != Op::MUL) return {};
  const double l = const_float(m->dtype(), std::numbers::log2e)->arg_float();
  for (int i = 0; i < 2; ++i) {
    const UOpRef& k = m->src(i);
    if (k->op() != Op::CONST) continue;
    const double v = k->arg_float();
    if (v == l) return m->src(1 - i);
    if (v == -l) return -m->src(1 - i);
  }
  return {};
}

UOpRef log2_(const UOpRef& x, const Fmt& f) {
  const double tiny = f.dbl ? 0x1p-1022 : 0x1p-126;
  const int shift = f.dbl ? 54 : 24;
  UOpRef sub = lt(x, c(f, tiny));
  UOpRef xs = where(sub, x * c(f, std::ldexp(1.0, shift)), x);
  UOpRef bits = UOp::make(Op::BITCAST, f.it, {xs});
  UOpRef e =
      alu(Op::SHR, {bits, ci(f, f.mbits)}) - ci(f, f.bias) - where(sub, ci(f, shift), ci(f, 0));
  const int64_t mant_mask = (int64_t{1} << f.mbits) - 1;
  UOpRef m = UOp::make(
      Op::BITCAST, f.t,
      {alu(Op::OR, {alu(Op::AND, {bits, ci(f, mant_mask)}), ci(f, int64_t{f.bias} << f.mbits)})});
  UOpRef big = lt(c(f, std::sqrt(2.0)), m);
  m = where(big, m * c(f, 0.5), m);
  e = where(big, e + ci(f, 1), e);
  UOpRef s = (m - c(f, 1.0)) / (m + c(f, 1.0));
  std::vector<double> k;
  for (int i = 0; i <= (f.dbl ? 10 : 5); ++i) k.push_back(2.0 / (std::log(2.0) * (2 * i + 1)));
  UOpRef r = cast(e, f.t) + s * horner(s * s, k, f);
  const double inf = std::numeric_limits<double>::infinity();
  r = where(lt(x, c(f, 0.0)), c(f, std::numeric_limits<double>::quiet_NaN()), r);
  r = where(eq(x, c(f, 0.0)), c(f, -inf), r);
  r = where(eq(x, c(f, inf)), c(f, inf), r);
  return where(is_nan(x), x, r);
}

UOpRef sin_(const UOpRef& x, const Fmt& f) {
  const double inf = std::numeric_limits<double>::infinity();
  // pi/2 = c1 + c2 + c3; c1 and c2 carry few bits so that k * c1 and k * c2 are exact.
  const double c1 = f.dbl ? 0x1.921fb54p+0 : 0x1.92p+0;
  const double c2 = f.dbl ? 0x1.10b46118p-30 : 0x1.fb4p-12;
  const double c3 = f.dbl ? 0x1.313198a2e037p-61 : 0x1.4442dp-24;
  UOpRef bad = alu(Op::OR, {is_nan(x), eq(alu(Op::MAX, {x, -x}), c(f, inf))});
  UOpRef xs = where(bad, c(f, 0.0), x);
  UOpRef kf = round_(xs * c(f, 2.0 / std::numbers::pi), f);
  UOpRef r = ((xs - kf * c(f, c1)) - kf * c(f, c2)) - kf * c(f, c3);
  UOpRef qf = kf - c(f, 4.0) * alu(Op::TRUNC, {kf * c(f, 0.25)});
  UOpRef q = cast(qf, dtypes::int32);
  UOpRef z = r * r;
  std::vector<double> sk, ck;
  double fact = 1.0;  // (2i+1)! and (2i)!
  for (int i = 1; i <= (f.dbl ? 10 : 6); ++i) {
    ck.push_back((i % 2 ? -1.0 : 1.0) / (fact * (2 * i - 1) * 2 * i) * 1.0);
    fact *= (2 * i - 1) * 2 * i;
    sk.push_back((i % 2 ? -1.0 : 1.0) / (fact * (2 * i + 1)));
  }
  // sin r = r + r z (s1 + z s2 + ...); cos r = 1 + z (c1 + z c2 + ...).
  UOpRef sin_p = r + r * z * horner(z, sk, f);
  UOpRef cos_p = c(f, 1.0) + z * horner(z, ck, f);
  UOpRef use_cos = eq(alu(Op::AND, {q, const_int(dtypes::int32, 1)}), const_int(dtypes::int32, 1));
  UOpRef neg = eq(alu(Op::AND, {q, const_int(dtypes::int32, 2)}), const_int(dtypes::int32, 2));
  UOpRef v = where(use_cos, cos_p, sin_p);
  v = where(neg, -v, v);
  return where(bad, c(f, std::numeric_limits<double>::quiet_NaN()), v);
}

}  // namespace

namespace {

template <typename Want>
UOpRef decompose_if(const UOpRef& root, const Target& target, Want want) {
  const bool has_f64 = (target.caps.dtype_mask >> PG_DTYPE_FLOAT64) & 1u;
  return rebuild(root, [&](const UOpRef& n) -> UOpRef {
    Op op = n->op();
    if ((op != Op::EXP2 && op != Op::LOG2 && op != Op::SIN) || !want(*n)) return n;
    UOpRef e = op == Op::EXP2 ? exp_argument(*n) : UOpRef{};
    UOpRef x = e ? e : n->src(0);
    DType t = n->dtype();
    DType work = t.scalar() == PG_DTYPE_FLOAT64 ? dtypes::float64 : dtypes::float32;
    if (op == Op::SIN && work == dtypes::float32 && has_f64) work = dtypes::float64;
    if (x->dtype() != work) x = cast(x, work);
    Fmt f = fmt_of(work);
    UOpRef r = e                ? exp_(x, f)
               : op == Op::EXP2 ? exp2_(x, f)
               : op == Op::LOG2 ? log2_(x, f)
                                : sin_(x, f);
    return r->dtype() == t ? r : cast(r, t);
  });
}

}  // namespace

UOpRef decompose_transcendentals(const UOpRef& root, const Target& target) {
  return decompose_if(root, target, [](const UOp&) { return true; });
}

UOpRef decompose_for_vectors(const UOpRef& root, const Target& target) {
  const uint32_t lanes32 =
      std::min(target.caps.vector_width_bytes / 4, target.caps.max_vector_lanes);
  if (lanes32 < 2) return root;
  // (float16 and bfloat16: e^x alone, worked in float32 from x; the product x * log2(e)
  // rounded to 11 or 8 bits was up to 10 ulps off. Their exp2 and log2 stay libm calls.)
  return decompose_if(root, target, [](const UOp& n) {
    if (n.dtype() == dtypes::float16 || n.dtype() == dtypes::bfloat16)
      return n.op() == Op::EXP2 && exp_argument(n);
    return n.op() != Op::SIN && (n.dtype() == dtypes::float32 || n.dtype() == dtypes::float64);
  });
}

}  // namespace polygrad::codegen
