// Element-wise math composed from the IR's primitives (EXP2, LOG2, SIN, SQRT, RECIP, TRUNC,
// MAX, comparisons, WHERE).
#include "tensor/tensor_impl.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace polygrad {

using detail::dt;
using detail::elementwise;
using detail::to_float;

using detail::kLn2;
using detail::kLog2E;

namespace {
Tensor unary_float(const char* op, Op alu, const Tensor& t) {
  detail::state(t, op);
  return elementwise(alu, {to_float(t)});
}
}  // namespace

Tensor Tensor::exp2() const {
  return unary_float("exp2", Op::EXP2, *this);
}
Tensor Tensor::log2() const {
  return unary_float("log2", Op::LOG2, *this);
}
Tensor Tensor::exp() const {
  detail::state(*this, "exp");
  return (to_float(*this) * kLog2E).exp2();
}
Tensor Tensor::log() const {
  detail::state(*this, "log");
  return log2() * kLn2;
}
Tensor Tensor::sqrt() const {
  return unary_float("sqrt", Op::SQRT, *this);
}
Tensor Tensor::reciprocal() const {
  return unary_float("reciprocal", Op::RECIP, *this);
}
Tensor Tensor::rsqrt() const {
  return sqrt().reciprocal();
}
Tensor Tensor::sin() const {
  return unary_float("sin", Op::SIN, *this);
}
Tensor Tensor::cos() const {
  detail::state(*this, "cos");
  return detail::widened(to_float(*this), [](const Tensor& x) {
    // cos(x) = cos(r + k pi/2) with k = round(x / (pi/2)) and r = x - k pi/2 by Cody-Waite
    // (pi/2 split in parts whose products with k, but the last, are exact: for |x| < 1e5 in
    // float32, where each part has 8 bits, and 1.3e7 in float64; past that it errs more):
    // by k mod 4, cos r, -sin r, -cos r, sin r, with cos r = 1 - 2 sin(r/2)^2 (|r| <= pi/4:
    // the subtracted part is below 0.15). One sin, of r or r/2, so no relative precision is
    // lost near the zeros of cos (sin(pi/2 - x) rounded pi/2 - x: 170000 ulps near them in
    // float32), and the gradient is -sin x to the last digits too (-2 sin(r/2) cos(r/2) on the
    // even branch, not the cos of a rounded r + pi/2).
    const bool dbl = dt(x).scalar() == PG_DTYPE_FLOAT64;
    const std::vector<double> parts =
        dbl ? std::vector<double>{0x1.921fb54p+0, 0x1.10b46118p-30, 0x1.313198a2e037p-61}
            : std::vector<double>{0x1.92p+0, 0x1.fap-12, 0x1.54p-20, 0x1.1p-30,
                                  0x1.68c234c4c6629p-39};
    Tensor y = x * (2.0 / detail::kPi);
    Tensor k = (y + (y < 0.0).where(-0.5, 0.5)).trunc();
    Tensor r = x;
    for (double c : parts) r = r - k * c;
    Tensor m = k - 4.0 * (k * 0.25).floor();
    Tensor odd = (m == 1.0) | (m == 3.0), neg = (m == 1.0) | (m == 2.0);
    Tensor s = odd.where(r, r * 0.5).sin();
    Tensor v = odd.where(s, 1.0 - 2.0 * s * s);
    return neg.where(-v, v);
  });
}
Tensor Tensor::tan() const {
  return sin() / cos();
}
Tensor Tensor::square() const {
  return *this * *this;
}
Tensor Tensor::abs() const {
  if (dt(*this).is_unsigned() || dt(*this).is_bool()) return *this;
  // x sign(x), tinygrad's: +0 at +-0 (max(x, -x) kept a tie's second operand, -0 at +0, and
  // 1 / |0| was -inf), and the gradient at 0 is g * 0 as torch's (NaN for an infinite g).
  if (dt(*this).is_float()) return *this * sign();
  return (*this < 0).where(-*this, *this);
}
Tensor Tensor::sign() const {
  detail::state(*this, "sign");
  if (dt(*this).is_bool()) return *this;  // torch's and tinygrad's: a bool is its own sign
  Tensor one = detail::scalar_like(*this, 1), zero = detail::scalar_like(*this, 0);
  // NaN compares false both ways: sign(NaN) = 0, as torch's sign (numpy: NaN). At 0 the
  // value is x * 0, so the gradient reaches x (zeros, as torch's; tinygrad adds x * 0).
  Tensor z = (*this == 0).where(*this * 0, zero);
  return (*this > 0).where(one, (*this < 0).where(-one, z));
}

Tensor Tensor::trunc() const {
  if (!dt(*this).is_float()) return *this;
  return elementwise(Op::TRUNC, {*this});
}
Tensor Tensor::floor() const {
  if (!dt(*this).is_float()) return *this;
  Tensor t = trunc();
  return (*this < t).where(t - 1, t);
}
Tensor Tensor::ceil() const {
  if (!dt(*this).is_float()) return *this;
  Tensor t = trunc();
  return (*this > t).where(t + 1, t);
}
Tensor Tensor::round() const {
  if (!dt(*this).is_float()) return *this;
  Tensor f = floor();
  Tensor frac = *this - f;
  Tensor f_even = (f * 0.5).floor() * 2.0 == f;
  Tensor up = (frac > 0.5) | ((frac == 0.5) & f_even.logical_not());
  Tensor r = up.where(f + 1, f);
  // A zero keeps x's sign, as IEEE's round-half-even and torch's: round(-0.4) is -0.0 (-1 + 1
  // gave +0.0).
  return (r == 0.0).where(*this * 0.0, r);
}
Tensor Tensor::isnan() const {
  return *this != *this;
}
Tensor Tensor::isinf() const {
  if (!dt(*this).is_float()) return Tensor::zeros(shape(), PG_DTYPE_BOOL, device());
  return (*this == INFINITY) | (*this == -INFINITY);
}

// ---- where, maximum, minimum, clamp ---------------------------------------------------------

Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  detail::check_same_device("where", *this, a);
  detail::check_same_device("where", *this, b);
  DType t = detail::promote_for("where", dt(a), dt(b));
  lazy::Shape s = detail::broadcast_shape(
      "where", detail::broadcast_shape("where", shape(), a.shape()), b.shape());
  Tensor c = detail::broadcast_to("where", bool_(), s);
  Tensor x = detail::broadcast_to("where", a.cast(t.scalar()), s);
  Tensor y = detail::broadcast_to("where", b.cast(t.scalar()), s);
  return elementwise(Op::WHERE, {c, x, y});
}
Tensor Tensor::where(const Tensor& a, Scalar b) const {
  return where(a, detail::scalar_like(a, b));
}
Tensor Tensor::where(Scalar a, const Tensor& b) const {
  return where(detail::scalar_like(b, a), b);
}
Tensor Tensor::where(Scalar a, Scalar b) const {
  // (A bool scalar is bool: where(true, false) is a bool tensor, where(true, 2) an int one.)
  auto int_dtype = [](Scalar s) { return s.is_bool ? dtypes::bool_ : detail::int_scalar_dtype(s); };
  DType t = a.is_int && b.is_int ? detail::promote_for("where", int_dtype(a), int_dtype(b))
                                 : dtypes::float32;
  return where(detail::constant(a, t, {}, device()), detail::constant(b, t, {}, device()));
}

Tensor Tensor::maximum(const Tensor& o) const {
  if (dt(*this).is_bool() && dt(o).is_bool()) return *this | o;
  return detail::binary("maximum", Op::MAX, *this, o);
}
Tensor Tensor::maximum(Scalar o) const {
  return maximum(detail::scalar_like(*this, o));
}
Tensor Tensor::minimum(const Tensor& o) const {
  DType t = detail::promote_for("minimum", dt(*this), dt(o));
  if (t.is_bool()) return *this & o;
  Tensor a = cast(t.scalar()), b = o.cast(t.scalar());
  if (t.is_float()) return -((-a).maximum(-b));
  // Bitwise not reverses the order of every int type (signed and unsigned) without overflow.
  auto inv = [](const Tensor& x) { return detail::elementwise(Op::NOT, {x}); };
  return inv(inv(a).maximum(inv(b)));
}
Tensor Tensor::minimum(Scalar o) const {
  return minimum(detail::scalar_like(*this, o));
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  detail::state(*this, "clamp");
  Tensor r = *this;
  // A float bound makes an integer tensor float32 (torch's clamp(0.0) of ints is float32).
  if (!dt(r).is_float() && ((min && !min->is_int) || (max && !max->is_int)))
    r = r.cast(PG_DTYPE_FLOAT32);
  if (!dt(r).is_float()) {
    // An int bound keeps an integer tensor's dtype (torch's clamp(0, 4) of ints is ints),
    // first brought into the dtype's range in integers (uint8's clamp(-1, 300) changes
    // nothing: as a uint8 constant -1 wrapped to 255 and 300 to 44; int64's bounds beyond 2^53
    // stay exact).
    const DType t = dt(r);
    const int64_t lo = t.int_min(), hi = t.int_max();
    auto bound = [&](const Scalar& s) {
      return Scalar(static_cast<long long>(std::clamp(s.int_value, lo, hi)));
    };
    if (min) r = r.maximum(bound(*min));
    if (max) r = r.minimum(bound(*max));
    return r;
  }
  // Selects, not maximum/minimum: torch's gradient is 1 on the bounds too (a tie of maximum
  // would give 1/2), 0 outside, and 0 at NaN (torch's mask min <= x <= max; it was 1).
  if (!min && !max) return r;
  Tensor nan = r.isnan(), x = r;
  if (min) r = (r < *min).where(*min, r);
  if (max) r = (r > *max).where(*max, r);
  return nan.where(x.detach(), r);
}

}  // namespace polygrad
