#include "codegen/transcendental.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
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
double magic_value(const Fmt& f) {
  return 1.5 * std::ldexp(1.0, f.mbits);
}
UOpRef magic(const Fmt& f) {
  return c(f, magic_value(f));
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
/// For t = y + magic: round(y) as a float (t - magic) and as an int. t holds the integer in its
/// low mantissa bits, so t's bits minus magic's are it: an integer subtract instead of a float
/// to int conversion (one instruction on a CPU, about eight on WebAssembly's SIMD, which has
/// only a saturating one).
std::pair<UOpRef, UOpRef> rounded(const UOpRef& t, const Fmt& f) {
  const double m = magic_value(f);
  const int64_t bits = f.dbl ? std::bit_cast<int64_t>(m) : std::bit_cast<int32_t>(float(m));
  return {t - magic(f), UOp::make(Op::BITCAST, f.it, {t}) - ci(f, bits)};
}
/// p * 2^n for an int n with |n| <= the clamp's limit, NaN where x is NaN.
UOpRef scale_(const UOpRef& p, const UOpRef& n, const UOpRef& x, const Fmt& f) {
  UOpRef n1 = alu(Op::SHR, {n, ci(f, 1)});
  UOpRef n2 = n - n1;
  return where(is_nan(x), x, p * pow2(n1, f) * pow2(n2, f));
}
double exp2_limit(const Fmt& f) {
  return f.dbl ? 1100.0 : 160.0;
}

UOpRef exp2_(const UOpRef& x, const Fmt& f) {
  UOpRef xc = clamp_(x, exp2_limit(f), f);
  auto [nf, n] = rounded(xc + magic(f), f);
  return scale_(horner(xc - nf, exp_series(std::numbers::ln2, f), f), n, x, f);
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
  auto [nf, n] = rounded(alu(Op::MULACC, {xc, c(f, std::numbers::log2e), magic(f)}), f);
  UOpRef r = alu(Op::MULACC, {nf, c(f, -c1), xc});
  r = alu(Op::MULACC, {nf, c(f, -c2), r});
  return scale_(horner(r, exp_series(1.0, f), f), n, x, f);
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

/// 2/pi in 24-bit pieces: 2/pi = sum over j of kTwoOverPi[j] * 2^(-24 (j + 1)) (computed
/// from pi by Machin's formula in integers; 70 pieces cover float64's exponents).
constexpr int64_t kTwoOverPi[] = {
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163,
    0xABDEBB, 0xC561B7, 0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129,
    0xA73EE8, 0x8235F5, 0x2EBB44, 0x84E99C, 0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C,
    0x845F8B, 0xBDF928, 0x3B1FF8, 0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D, 0x367ECF,
    0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D, 0x7527BA, 0xC7EBE5, 0xF17B3D, 0x0739F7, 0x8A5292,
    0xEA6BFB, 0x5FB11F, 0x8D5D08, 0x560330, 0x46FC7B, 0x6BABF0, 0xCFBC20, 0x9AF436, 0x1DA9E3,
    0x91615E, 0xE61B08, 0x659985, 0x5F14A0, 0x68408D, 0xFFD880, 0x4D7327, 0x310606, 0x1556CA,
    0x73A8C9, 0x60E27B, 0xC08C6B, 0x47C419, 0xC367CD, 0xDCE809, 0x2A8359};
constexpr int kPieces = sizeof kTwoOverPi / sizeof kTwoOverPi[0];

/// The reduction of a float64 |x| >= 2^23 (Payne-Hanek): x * 2/pi modulo 4 as a quadrant n
/// (0..3, a float) and a fraction r in about [-1/2, 1/2], r * pi/2 being x - (n + 4k) pi/2.
/// x = z 2^e0 with z in [2^23, 2^24) split into three 24-bit integers tx0 + tx1 2^-24 +
/// tx2 2^-48; each product tx_i * kTwoOverPi[j] is exact in a double (48 bits), and the pieces
/// j with i + j < jv, jv = (e0 - 3) / 24, add multiples of 8 and are skipped: only seven
/// pieces from jv - 2 on are read (a chain of selects on jv up to `max_exp`'s, the input
/// type's largest exponent). The sums q_k of the products of weight 2^(s - 24k) are exact
/// (below 3 * 2^48); q_0 and q_1 give the integer part modulo 8 exactly, q_2..q_4 the fraction.
std::pair<UOpRef, UOpRef> payne_hanek(const UOpRef& xa, const Fmt& f, int max_exp) {
  const DType i64 = dtypes::int64;
  auto i = [&](int64_t v) { return const_int(i64, v); };
  UOpRef bits = UOp::make(Op::BITCAST, i64, {xa});
  UOpRef e = alu(Op::AND, {alu(Op::SHR, {bits, i(52)}), i(0x7ff)}) - i(1023);
  UOpRef e0 = e - i(23);
  e0 = where(lt(e0, i(0)), i(0), e0);  // (|x| below 2^23: its result is not used)
  UOpRef z = xa * pow2(-e0, f);
  UOpRef tx0 = alu(Op::TRUNC, {z});
  UOpRef z1 = (z - tx0) * c(f, 0x1p24);
  UOpRef tx1 = alu(Op::TRUNC, {z1});
  UOpRef tx2 = (z1 - tx1) * c(f, 0x1p24);
  UOpRef e3 = e0 - i(3);
  UOpRef jv = alu(Op::IDIV, {where(lt(e3, i(0)), i(0), e3), i(24)});
  const int jv_max = std::max(0, (max_exp - 26) / 24);
  std::vector<UOpRef> at_jv;
  for (int t = 0; t <= jv_max; ++t) at_jv.push_back(eq(jv, i(t)));
  // piece[m] = kTwoOverPi[jv + m - 2], 0 outside the table.
  std::vector<UOpRef> piece;
  for (int m = 0; m < 7; ++m) {
    UOpRef v = c(f, 0.0);
    for (int t = jv_max; t >= 0; --t) {
      const int j = t + m - 2;
      const double w = j >= 0 && j < kPieces ? static_cast<double>(kTwoOverPi[j]) : 0.0;
      v = jv_max == 0 ? c(f, w) : where(at_jv[t], c(f, w), v);
    }
    piece.push_back(v);
  }
  const UOpRef tx[3] = {tx0, tx1, tx2};
  std::vector<UOpRef> q;
  for (int k = 0; k <= 4; ++k) {
    UOpRef sum;
    for (int ti = 0; ti < 3; ++ti) {
      UOpRef p = tx[ti] * piece[k - ti + 2];
      sum = sum ? sum + p : p;
    }
    q.push_back(sum);
  }
  UOpRef ps = pow2(e0 - i(24) * (jv + i(1)), f);  // 2^s
  auto mod8 = [&](const UOpRef& v) { return v - c(f, 8.0) * alu(Op::TRUNC, {v * c(f, 0.125)}); };
  UOpRef a = mod8(mod8(q[0] * ps) + q[1] * ps * c(f, 0x1p-24));  // exact: < 53 bits wide
  UOpRef t2 = q[2] * ps * c(f, 0x1p-48);
  UOpRef t34 = q[3] * ps * c(f, 0x1p-72) + q[4] * ps * c(f, 0x1p-96);
  UOpRef n = alu(Op::TRUNC, {a + t2 + c(f, 0.5)});
  UOpRef frac = ((a - n) + t2) + t34;
  UOpRef quadrant = n - c(f, 4.0) * alu(Op::TRUNC, {n * c(f, 0.25)});
  return {quadrant, frac};
}

/// sin(x); `max_exp` is the largest binary exponent the input's own type can hold (it bounds
/// the Payne-Hanek table lookup).
UOpRef sin_(const UOpRef& x, const Fmt& f, int max_exp) {
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
  if (f.dbl && max_exp >= 23) {
    // Beyond 2^23 k * c1 is no longer exact: Payne-Hanek, on |x|, then sin(-x) = -sin(x)
    // as quadrant -n and fraction -r.
    UOpRef xa = alu(Op::MAX, {xs, -xs});
    auto [n, frac] = payne_hanek(xa, f, max_exp);
    UOpRef neg = lt(xs, c(f, 0.0));
    UOpRef rb = frac * c(f, std::numbers::pi / 2);
    UOpRef big = lt(c(f, 0x1p23), xa);
    r = where(big, where(neg, -rb, rb), r);
    qf = where(big, where(neg, c(f, 4.0) - n, n), qf);  // 4 - n: 4 for n = 0 is 0 modulo 4
  }
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

/// The largest binary exponent of a finite value of float type `t`.
int max_exponent(DType t) {
  switch (t.scalar()) {
    case PG_DTYPE_FLOAT64:
      return 1023;
    case PG_DTYPE_FLOAT16:
      return 15;
    default:
      return 127;  // float32, bfloat16
  }
}

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
                                : sin_(x, f, max_exponent(t));
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
