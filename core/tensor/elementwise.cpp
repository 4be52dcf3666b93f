// Arithmetic, comparisons and their operators (broadcasting, promotion, scalar operands).
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

using detail::binary;
using detail::dt;
using detail::scalar_like;

namespace {

constexpr double kMaxProductPower = 8;

// True division: ints and bools divide as float32.
Tensor true_div(const Tensor& a, const Tensor& b) {
  DType t = detail::promote_for("div", dt(a), dt(b));
  if (!t.is_float()) t = dtypes::float32;
  return binary("div", Op::FDIV, a.cast(t.scalar()), b.cast(t.scalar()));
}

// A scalar divisor or dividend next to `t`, in the dtype the division runs in: an int or bool
// tensor divides as float32, so an int scalar is not first wrapped into the tensor's dtype
// (int8 / 300 was int8 / 44, uint8 / -3 was uint8 / 253; torch divides by 300 and -3).
Tensor div_scalar_like(const Tensor& t, Scalar s) {
  return scalar_like(detail::to_float(t), s);
}

Tensor sub_impl(const Tensor& a, const Tensor& b) {
  if (dt(a).is_bool() && dt(b).is_bool())
    user_error("sub: subtracting bool tensors is not supported; use bitwise_xor");
  return binary("sub", Op::SUB, a, b);
}

// An integer power, exact and wrapping as torch's: square and multiply over every value bit
// of the exponent (31 steps for int32). A negative exponent gives 1 for a base of 1, +-1 for
// -1 (by its parity) and 0 otherwise, torch's values. (Through float64, results past 2^53 lost
// digits and an overflow saturated where torch wraps: int32 3 ** 39 gave -2^31.)
Tensor int_pow(const Tensor& b, const Tensor& e) {
  const DType t = dt(b);
  const lazy::Shape& s = b.shape();
  auto k = [&](int64_t v) { return detail::constant(v, t, s, b.device()); };
  const int bits = static_cast<int>(t.itemsize() * 8) - (t.is_unsigned() ? 0 : 1);
  Tensor acc = k(1), p = b, q = e;
  for (int i = 0; i < bits; ++i) {
    acc = (detail::elementwise(Op::AND, {q, k(1)}) != k(0)).where(acc * p, acc);
    if (i + 1 == bits) break;
    p = p * p;
    q = detail::elementwise(Op::SHR, {q, k(1)});
  }
  if (t.is_unsigned()) return acc;
  Tensor odd = detail::elementwise(Op::AND, {e, k(1)}) != k(0);
  Tensor negative = (b == k(1)).where(k(1), (b == k(-1)).where(odd.where(k(-1), k(1)), k(0)));
  return (e < k(0)).where(negative, acc);
}

// (+-0)^y as IEEE's pow: 1 for y = 0, 0 for y > 0 and inf for y < 0, negative for -0 and an
// odd integer y, NaN for NaN. `neg` marks -0; the result has no gradient.
Tensor pow_of_zero(const Tensor& neg, const Tensor& y) {
  Tensor odd = neg & y.isfinite() & (y.trunc() == y) & ((y * 0.5).trunc() * 2.0 != y);
  Tensor one = scalar_like(y, 1.0), big = scalar_like(y, INFINITY), nil = scalar_like(y, 0.0);
  Tensor r = (y == 0.0).where(one, (y < 0.0).where(big, nil));
  return y.isnan().where(y, odd.where(-r, r)).detach();
}

// A term of value 0 whose derivative in v is the value d, +-inf and NaN included, for a
// gradient given where the computed one would be 0 * inf: d (v - v') with v' = v detached
// where d is finite, sign(d) sqrt(v - v') where it is infinite (sqrt's derivative at 0),
// (v - v') sqrt(v - v') where it is NaN (0 + 0 / 0). Each root reads 1 where not chosen. An
// infinite v has none (v - v' would be NaN).
Tensor with_derivative(const Tensor& v, const Tensor& d) {
  Tensor s = v.isfinite().where(v - v.detach(), 0.0), inf = d.isinf(), nan = d.isnan();
  Tensor si = inf.where(s, 1.0), sn = nan.where(s, 1.0);
  Tensor finite = (inf | nan).where(0.0, d) * s;
  return inf.where((d < 0.0).where(-si.sqrt(), si.sqrt()), nan.where(sn * sn.sqrt(), finite));
}

}  // namespace

Tensor Tensor::add(const Tensor& o) const {
  if (dt(*this).is_bool() && dt(o).is_bool()) return binary("add", Op::OR, *this, o);
  return binary("add", Op::ADD, *this, o);
}
Tensor Tensor::add(Scalar o) const {
  return add(scalar_like(*this, o));
}
Tensor Tensor::sub(const Tensor& o) const {
  return sub_impl(*this, o);
}
Tensor Tensor::sub(Scalar o) const {
  return sub_impl(*this, scalar_like(*this, o));
}
Tensor Tensor::mul(const Tensor& o) const {
  if (dt(*this).is_bool() && dt(o).is_bool()) return binary("mul", Op::AND, *this, o);
  return binary("mul", Op::MUL, *this, o);
}
Tensor Tensor::mul(Scalar o) const {
  return mul(scalar_like(*this, o));
}
Tensor Tensor::div(const Tensor& o) const {
  return true_div(*this, o);
}
Tensor Tensor::div(Scalar o) const {
  return true_div(*this, div_scalar_like(*this, o));
}
Tensor Tensor::neg() const {
  detail::state(*this, "neg");
  if (dt(*this).is_bool()) return logical_not();
  return detail::elementwise(Op::NEG, {*this});
}

Tensor Tensor::pow(const Tensor& o) const {
  DType t = detail::promote_for("pow", dt(*this), dt(o));
  lazy::Shape s = detail::broadcast_shape("pow", shape(), o.shape());
  if (t.is_bool()) return double_().pow(o.double_()).cast(t.scalar());
  if (!t.is_float())
    return int_pow(detail::broadcast_to("pow", cast(t.scalar()), s),
                   detail::broadcast_to("pow", o.cast(t.scalar()), s));
  // float16 and bfloat16 powers are worked in float32 and rounded once, as torch's are: in
  // float16, 2^(y log2|x|) lost three times the precision of the result's rounding.
  if (t.scalar() == PG_DTYPE_FLOAT16 || t.scalar() == PG_DTYPE_BFLOAT16)
    return cast(PG_DTYPE_FLOAT32).pow(o.cast(PG_DTYPE_FLOAT32)).cast(t.scalar());
  // float32 powers are worked in float64 and rounded once, as floordiv's are: in float32 the
  // error of y log2|x| grows with it, and 2^(y log2|x|) was up to 43 ulps from the true power
  // (5 on average over x in [0.01, 100], y in [-8, 8]), where torch's is within one.
  if (t.scalar() == PG_DTYPE_FLOAT32)
    return cast(PG_DTYPE_FLOAT64).pow(o.cast(PG_DTYPE_FLOAT64)).cast(t.scalar());
  Tensor x = detail::broadcast_to("pow", cast(t.scalar()), s);
  Tensor y = detail::broadcast_to("pow", o.cast(t.scalar()), s);
  // |x|^y = 2^(y log2|x|); a negative base needs a whole y: odd y flips the sign, others NaN.
  // At x = 0 the logarithm is taken of 1 (its gradient would be 0 * inf = NaN) and the
  // result is (+-0)^y with torch's derivatives: y (+-0)^(y - 1) in x (0 for y = 0: 1 for
  // y = 1, inf for 0 < y < 1, -inf for y < 0) and (+-0)^y ln 0 in y (0 for y >= 0). They
  // were 0 for every y, and (-0)^-1 was inf.
  // x^0 = 1 even for x = +-inf or NaN (`one`; it reads 1 too, where its gradient is finite).
  // Only there: elsewhere r is 1 already and keeps the gradient ln|x| for y (a constant 1 gave
  // 0: d/dy 2^y at y = 0 is ln 2).
  Tensor zero = x == 0.0, one = (y == 0.0) & x.isfinite().logical_not(), exact = zero | one;
  Tensor mag = exact.where(0.0, y * exact.where(1.0, x.abs()).log2()).exp2();
  Tensor whole = y.trunc() == y;
  Tensor odd = whole & ((y * 0.5).trunc() * 2.0 != y);
  Tensor nan = detail::constant(NAN, t, s, device());
  // A finite negative base has torch's NaN derivatives: in x and y where y is not whole
  // (`frac`: the value is NaN; they were 0) and in y everywhere (ln x of a negative x; it was
  // ln|x| x^y). (The product with NaN reads mag only where it is taken: elsewhere its gradient
  // would be 0 * NaN.)
  Tensor below = x < 0.0, frac = below & whole.logical_not() & x.isfinite();
  // (-inf)^y for a y not whole is |x|^y, +inf or +0, as IEEE's and torch's pow (it was NaN).
  Tensor neg_result = whole.where(odd.where(-mag, mag), x.isinf().where(mag, nan));
  neg_result = frac.where(frac.where(mag, 0.0) * nan, neg_result) -
               with_derivative(y, below.where(nan, 0.0));
  Tensor r = below.where(neg_result, mag);
  Tensor neg_zero = zero & (1.0 / zero.where(x, 1.0) < 0.0);
  Tensor at_zero = pow_of_zero(neg_zero, y), yd = y.detach();
  Tensor dx = (yd == 0.0).where(0.0, yd * pow_of_zero(neg_zero, yd - 1.0));
  Tensor dy = ((yd < 0.0) | yd.isnan()).where(-at_zero * INFINITY, 0.0);
  at_zero =
      at_zero + with_derivative(x, zero.where(dx, 0.0)) + with_derivative(y, zero.where(dy, 0.0));
  return one.where(1.0, zero.where(at_zero, r));
}
Tensor Tensor::pow(Scalar o) const {
  if (!o.is_int && o.value == 0.5 && dt(*this).is_float()) return sqrt();
  // A half type's power, whole exponents too, goes through float32 and is rounded once, as
  // torch's: products in float16 rounded at every step (x**8 was 4.5 ulps off). The exponent is
  // used as given: rounded to bfloat16, 1.7 would be 1.703125.
  const pg_dtype h = dt(*this).scalar();
  if (h == PG_DTYPE_FLOAT16 || h == PG_DTYPE_BFLOAT16) return cast(PG_DTYPE_FLOAT32).pow(o).cast(h);
  // float32 products other than torch's own (x**2, x**3, x**-1, x**-2, which its kernel
  // multiplies out in float32 too) are taken in float64 and rounded once: x**8 rounded at
  // every step was 4.4 ulps off, x**-8 5.9, where torch's std::pow is within one.
  if (h == PG_DTYPE_FLOAT32 && std::trunc(o.value) == o.value &&
      std::fabs(o.value) <= kMaxProductPower && o.value != 1 && o.value != 2 && o.value != 3 &&
      o.value != -1 && o.value != -2)
    return cast(PG_DTYPE_FLOAT64).pow(o).cast(h);
  // A whole exponent of at most 8 in magnitude: products by squaring (x**2.0, x**3), exact,
  // with torch's gradient at x = 0 (n x^(n-1), not NaN), a reciprocal for a negative one. An
  // integer tensor's positive integer exponent up to 64 too: exact, wrapping as torch's does.
  const double n = std::fabs(o.value);
  const bool ints = !dt(*this).is_float() && !dt(*this).is_bool() && o.is_int && o.value > 0;
  const bool product = dt(*this).is_float() ? n <= kMaxProductPower : ints && n <= 64;
  if (product && n >= 1 && std::trunc(n) == n) {
    auto power = [n](Tensor base) {
      Tensor r;
      for (auto k = static_cast<int64_t>(n); k > 0; k >>= 1) {
        if (k & 1) r = r.defined() ? r * base : base;
        if (k > 1) base = base * base;
      }
      return r;
    };
    if (o.value > 0) return power(*this);
    // 1 / x^n (torch's value for x^-2 is 1 / (x x)), but (1 / x)^n at x = 0 and +-inf: there
    // its gradient is torch's -n x^(-n-1), +-inf and -+0, where 1 / x^n's was inf * 0 = NaN.
    Tensor edge = (*this == 0.0) | isinf();
    return edge.where(power(edge.where(*this, 1.0).reciprocal()),
                      power(edge.where(1.0, *this)).reciprocal());
  }
  if (o.is_int && o.value < 0 && !dt(*this).is_float() && !dt(*this).is_bool())
    user_error("pow: integers to negative integer powers are not allowed (" +
               std::to_string(static_cast<long long>(o.value)) + "); cast to a float first");
  return pow(scalar_like(*this, o));
}
Tensor Tensor::pow(Scalar base, const Tensor& x) {
  return scalar_like(x, base).pow(x);
}

namespace {

struct DivMod {
  Tensor q, r;
};

// Python's floor division a // b and remainder a % b (the divisor's sign), as torch's.
DivMod floor_divmod(const char* name, const Tensor& a0, const Tensor& b0) {
  detail::check_same_device(name, a0, b0);
  DType t = detail::promote_for(name, dt(a0), dt(b0));
  if (t.is_bool()) user_error(std::string(name) + ": bool tensors have no floor division");
  lazy::Shape s = detail::broadcast_shape(name, a0.shape(), b0.shape());
  Tensor a = detail::broadcast_to(name, a0.cast(t.scalar()), s);
  Tensor b = detail::broadcast_to(name, b0.cast(t.scalar()), s);
  if (t.is_float()) {
    // In float64, where the remainder a - b q is computed exactly: b q = p + e by Dekker's
    // product (Veltkamp's split of each factor into 26-bit halves; the renderers keep every op
    // a statement of its own, so nothing fuses it away). q = floor(a / b) may be one too large
    // where the quotient rounds up to an integer (1.0 // 0.1): the remainder's sign then
    // differs from b's and one step down corrects both, as torch's fmod-based kernels do.
    Tensor x = a.double_(), y = b.double_();
    auto split = [](const Tensor& v) {
      Tensor c = v * 134217729.0;  // 2^27 + 1
      Tensor hi = c - (c - v);
      return std::pair{hi, v - hi};
    };
    auto [yh, yl] = split(y);
    // v - y floor(v / y), exact, and that quotient. (Where it is 0: v itself, also for an
    // infinite y, whose product with 0 would be NaN.)
    auto reduce = [&](const Tensor& v) {
      Tensor q = (v / y).floor();
      auto [qh, ql] = split(q);
      Tensor p = y * q;
      Tensor e = (((yh * qh - p) + yh * ql) + yl * qh) + yl * ql;
      return std::pair{q, (q == 0.0).where(v, (v - p) - e)};
    };
    auto [q, r] = reduce(x);
    // A quotient beyond 2^53 is itself rounded, so its remainder can exceed b: a second step
    // brings it below (for quotients up to 2^106). (Not where it equals b: -1e-300 % 7 is 7.0,
    // a remainder rounded up, as in torch's.)
    auto [q2, r2] = reduce(r);
    Tensor again = r.abs() > y.abs();
    q = again.where(q + q2, q);
    r = again.where(r2, r);
    Tensor wrong = (r != 0.0) & ((r < 0.0) ^ (y < 0.0));
    q = wrong.where(q - 1.0, q);
    r = wrong.where(r + y, r);
    // An infinite dividend has no floor quotient: NaN, as torch's and Python's (its remainder
    // is NaN already); over 0 it is a / b, +-inf, as torch's. (floor(inf / 2.5) gave inf.)
    q = (x.isinf() & (y != 0.0)).where(NAN, q);
    return {q.cast(t.scalar()), r.cast(t.scalar())};
  }
  // C's IDIV and MOD truncate toward zero: one step toward -inf where the remainder's sign
  // differs from the divisor's. A zero divisor would trap, and so would INT_MIN / -1: the
  // division runs by 1 there, and the result is 0 (numpy's) or -a.
  Tensor zero = b == 0;
  Tensor safe = (t.is_signed_int() ? zero | (b == -1) : zero).where(scalar_like(b, 1), b);
  Tensor q = detail::elementwise(Op::IDIV, {a, safe});
  Tensor r = detail::elementwise(Op::MOD, {a, safe});
  if (t.is_signed_int()) {
    Tensor wrong = (r != 0) & ((r < 0) ^ (safe < 0));
    q = (b == -1).where(-a, wrong.where(q - 1, q));
    r = wrong.where(r + safe, r);
  }
  Tensor nil = scalar_like(a, 0);
  return {zero.where(nil, q), zero.where(nil, r)};
}

}  // namespace

Tensor Tensor::floordiv(const Tensor& o) const {
  return floor_divmod("floordiv", *this, o).q;
}
Tensor Tensor::floordiv(Scalar o) const {
  return floordiv(scalar_like(*this, o));
}
Tensor Tensor::mod(const Tensor& o) const {
  return floor_divmod("mod", *this, o).r;
}
Tensor Tensor::mod(Scalar o) const {
  return mod(scalar_like(*this, o));
}

#define POLYGRAD_COMPARE(name, expr_tt)        \
  Tensor Tensor::name(const Tensor& o) const { \
    const Tensor& a = *this;                   \
    const Tensor& b = o;                       \
    return expr_tt;                            \
  }                                            \
  Tensor Tensor::name(Scalar o) const {        \
    return name(scalar_like(*this, o));        \
  }
POLYGRAD_COMPARE(lt, binary("lt", Op::CMPLT, a, b))
POLYGRAD_COMPARE(gt, binary("gt", Op::CMPLT, b, a))
POLYGRAD_COMPARE(le, binary("le", Op::CMPLT, a, b) | binary("le", Op::CMPEQ, a, b))
POLYGRAD_COMPARE(ge, binary("ge", Op::CMPLT, b, a) | binary("ge", Op::CMPEQ, a, b))
POLYGRAD_COMPARE(eq, binary("eq", Op::CMPEQ, a, b))
POLYGRAD_COMPARE(ne, binary("ne", Op::CMPNE, a, b))
#undef POLYGRAD_COMPARE

Tensor Tensor::logical_not() const {
  Tensor b = dt(*this).is_bool() ? *this : ne(0);
  return detail::elementwise(Op::NOT, {b});
}

namespace {
Tensor bitwise(const char* name, Op op, const Tensor& a, const Tensor& b) {
  DType t = detail::promote_for(name, dt(a), dt(b));
  if (t.is_float()) user_error(std::string(name) + ": float tensors have no bitwise ops");
  return binary(name, op, a, b);
}
}  // namespace

Tensor Tensor::bitwise_and(const Tensor& o) const {
  return bitwise("bitwise_and", Op::AND, *this, o);
}
Tensor Tensor::bitwise_or(const Tensor& o) const {
  return bitwise("bitwise_or", Op::OR, *this, o);
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  return bitwise("bitwise_xor", Op::XOR, *this, o);
}

// ---- operators ----------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) {
  return a.add(b);
}
Tensor operator+(const Tensor& a, Scalar b) {
  return a.add(b);
}
Tensor operator+(Scalar a, const Tensor& b) {
  return scalar_like(b, a).add(b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return a.sub(b);
}
Tensor operator-(const Tensor& a, Scalar b) {
  return a.sub(b);
}
Tensor operator-(Scalar a, const Tensor& b) {
  return scalar_like(b, a).sub(b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return a.mul(b);
}
Tensor operator*(const Tensor& a, Scalar b) {
  return a.mul(b);
}
Tensor operator*(Scalar a, const Tensor& b) {
  return scalar_like(b, a).mul(b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return a.div(b);
}
Tensor operator/(const Tensor& a, Scalar b) {
  return a.div(b);
}
Tensor operator/(Scalar a, const Tensor& b) {
  return div_scalar_like(b, a).div(b);
}
Tensor operator%(const Tensor& a, const Tensor& b) {
  return a.mod(b);
}
Tensor operator%(const Tensor& a, Scalar b) {
  return a.mod(b);
}
Tensor operator%(Scalar a, const Tensor& b) {
  return scalar_like(b, a).mod(b);
}
Tensor operator-(const Tensor& a) {
  return a.neg();
}
Tensor operator<(const Tensor& a, const Tensor& b) {
  return a.lt(b);
}
Tensor operator<(const Tensor& a, Scalar b) {
  return a.lt(b);
}
Tensor operator<(Scalar a, const Tensor& b) {
  return b.gt(a);
}
Tensor operator<=(const Tensor& a, const Tensor& b) {
  return a.le(b);
}
Tensor operator<=(const Tensor& a, Scalar b) {
  return a.le(b);
}
Tensor operator<=(Scalar a, const Tensor& b) {
  return b.ge(a);
}
Tensor operator>(const Tensor& a, const Tensor& b) {
  return a.gt(b);
}
Tensor operator>(const Tensor& a, Scalar b) {
  return a.gt(b);
}
Tensor operator>(Scalar a, const Tensor& b) {
  return b.lt(a);
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  return a.ge(b);
}
Tensor operator>=(const Tensor& a, Scalar b) {
  return a.ge(b);
}
Tensor operator>=(Scalar a, const Tensor& b) {
  return b.le(a);
}
Tensor operator==(const Tensor& a, const Tensor& b) {
  return a.eq(b);
}
Tensor operator==(const Tensor& a, Scalar b) {
  return a.eq(b);
}
Tensor operator==(Scalar a, const Tensor& b) {
  return b.eq(a);
}
Tensor operator!=(const Tensor& a, const Tensor& b) {
  return a.ne(b);
}
Tensor operator!=(const Tensor& a, Scalar b) {
  return a.ne(b);
}
Tensor operator!=(Scalar a, const Tensor& b) {
  return b.ne(a);
}
Tensor operator&(const Tensor& a, const Tensor& b) {
  return a.bitwise_and(b);
}
Tensor operator|(const Tensor& a, const Tensor& b) {
  return a.bitwise_or(b);
}
Tensor operator^(const Tensor& a, const Tensor& b) {
  return a.bitwise_xor(b);
}
Tensor operator!(const Tensor& a) {
  return a.logical_not();
}

}  // namespace polygrad
