// log1p, expm1, log10, hyperbolic and inverse trigonometric functions, and the activations
// built on them, composed from element-wise ops with care for precision near 0 and for
// gradients without NaN: a branch that where() discards still gets a gradient (0 times its
// local derivative), so each branch sees an input where its derivative is finite.
#include "tensor/tensor_impl.hpp"

#include <cmath>
#include <numbers>

namespace polygrad {

using detail::dt;
using detail::kLn2;
using detail::kPi;
using detail::to_float;
using detail::widened;

namespace {

// Past this, asinh(y) = log(2y) and acosh(y) = log(2y) to well below a float64 ulp (the next
// term is 1 / (4y^2)), and y^2 may overflow.
constexpr double kLogLimit = 1e8;

// |x| by a select, not abs(), whose gradient at 0 is 0 (sinh'(0) is 1).
Tensor magnitude(const Tensor& x) {
  return (x < 0.0).where(-x, x);
}

// e^y / 2 for y >= 1 as e^(y - 1) * (e / 2): y - 1 is exact there, so within 2 ulps, and it
// and its gradient are finite wherever the result is (e^y alone overflows first; e^(y - ln 2)
// rounded y - ln 2, |y| ulps at large y; e^(y/2) squared overflowed in its gradient).
Tensor half_exp(const Tensor& y) {
  return (y - 1.0).exp() * (std::numbers::e / 2);
}

// f(|x|) with the sign of x, for odd f.
template <class F>
Tensor odd(const Tensor& x, F f) {
  Tensor r = f(magnitude(x));
  return (x < 0.0).where(-r, r);
}

// atan(y) for y in [0, 1]: around 1, atan(y) = pi/4 + atan((y - 1) / (y + 1)), so the series
// argument s has |s| <= tan(pi/8) and s^2 <= 0.1716; the alternating Taylor series
// s - s^3/3 + ... then errs less than its first omitted term: 9 terms for float32 (7e-9
// relative), 21 for float64 (1e-17).
Tensor atan_unit(const Tensor& y) {
  Tensor mid = y > 0.41421356237309503;
  Tensor s = mid.where((y - 1.0) / (y + 1.0), y);
  Tensor s2 = s * s;
  const int terms = dt(y).scalar() == PG_DTYPE_FLOAT64 ? 21 : 9;
  Tensor p = detail::scalar_like(s2, (terms % 2 ? 1.0 : -1.0) / (2 * terms - 1));
  for (int n = terms - 2; n >= 0; --n) p = p * s2 + (n % 2 ? -1.0 : 1.0) / (2 * n + 1);
  return s * p + mid.where(detail::scalar_like(s, kPi / 4), detail::scalar_like(s, 0.0));
}

// asin and acos from atan: with s = sqrt((1 - x)(1 + x)) (exact factors near |x| = 1; as
// sqrt(1 - x) sqrt(1 + x) beyond 1/sqrt(2): the root of the product has the gradient
// inf * 0 = NaN at |x| = 1),
// `inner` = atan(x / s) where |x| <= 1/sqrt(2) (`mid`), `outer` = atan(s / |x|) beyond. Each
// branch sees an input where its derivative is finite, and at |x| = 1 `outer`'s gradient is
// s' = -inf, so asin's and acos's are +-inf as torch's (atan(x / s) alone gave NaN there).
struct ArcParts {
  Tensor mid, inner, outer;
};
ArcParts arc_parts(const Tensor& x) {
  Tensor y = magnitude(x);
  Tensor mid = y <= 0.70710678118654752;
  Tensor xi = mid.where(x, 0.0), yo = mid.where(0.9, y);
  Tensor si = ((1.0 - xi) * (1.0 + xi)).sqrt(), so = (1.0 - yo).sqrt() * (1.0 + yo).sqrt();
  return {mid, (xi / si).atan(), (so / yo).atan()};
}

// asin at x = +-1 from its leading terms there, sign(x) (pi/2 - sqrt(2 (1 - |x|))), whose
// derivatives are torch's: +inf, then sign(x) inf (atan's form gave inf * 0 = NaN for the
// second). Elsewhere (`edge` false) it reads 0, where its root is finite.
Tensor asin_at_edge(const Tensor& x, const Tensor& edge) {
  Tensor xe = edge.where(x, 0.0), neg = xe < 0.0;
  Tensor r = kPi / 2 - (2.0 * (1.0 - neg.where(-xe, xe))).sqrt();
  return neg.where(-r, r);
}

}  // namespace

Tensor Tensor::log1p() const {
  detail::state(*this, "log1p");
  return widened(to_float(*this), [](const Tensor& x) {
    // log(u) * x / (u - 1) with u = 1 + x: the rounding of u cancels (Goldberg); x itself
    // where u is 1 (|x| below half an ulp of 1); log(u) itself where u is infinite or not
    // positive, so the gradient is 1/u there as torch's (inf at -1, 0 at inf). The value is
    // the quotient's, its gradient that of log(u), 1/u, to every order: the quotient's own
    // second derivative cancels catastrophically near 0 (-556 for -1 at x = 1e-9), and x's is 0.
    Tensor u = 1.0 + x;
    Tensor one = u == 1.0, direct = (u <= 0.0) | u.isinf();
    Tensor us = (one | direct).where(2.0, u);
    Tensor plain = direct.where(u, 1.0).log();
    Tensor log_u = direct.where(1.0, u).log();
    Tensor value = one.where(x, us.log() * (x / (us - 1.0)));
    return direct.where(plain, value.detach() - (log_u.detach() - log_u));
  });
}

Tensor Tensor::expm1() const {
  detail::state(*this, "expm1");
  return widened(to_float(*this), [](const Tensor& x) {
    // Near 0: (u - 1) * x / log(u) with u = e^x (Kahan), x itself where u is 1. Elsewhere
    // e^x - 1 loses nothing. Near 0 the value is the quotient's and the gradient u's, e^x to
    // every order: the quotient's second derivative cancels catastrophically (624 for 1 at
    // x = 1e-9), and x's is 0.
    Tensor small = (x < 0.5) & (x > -0.5);
    Tensor xs = small.where(x, 0.25);
    Tensor u = xs.exp();
    Tensor one = u == 1.0;
    Tensor us = one.where(2.0, u);
    Tensor near = one.where(xs, (us - 1.0) * (xs / us.log()));
    near = near.detach() - (u.detach() - u);
    return small.where(near, small.where(1.0, x).exp() - 1.0);
  });
}

Tensor Tensor::log10() const {
  return log2() * 0.30102999566398120;  // log10(2)
}

Tensor Tensor::tanh() const {
  detail::state(*this, "tanh");
  // One TANH node (its gradient 1 - tanh^2), expanded by the scheduler (schedule/activations.hpp).
  // It was 40 nodes here, and building an LSTM step's graph spent most of its time in them.
  return widened(to_float(*this),
                 [](const Tensor& x) { return detail::elementwise(Op::TANH, {x}); });
}

Tensor Tensor::sinh() const {
  detail::state(*this, "sinh");
  return widened(to_float(*this), [](const Tensor& x) {
    // (e^y - e^-y) / 2 = (u + u / (u + 1)) / 2 with u = e^y - 1, y = |x|: no cancellation;
    // past y = 20, e^-y is below float64's precision and sinh is e^y / 2 (half_exp).
    return odd(x, [](const Tensor& y) {
      Tensor big = y > 20.0;
      Tensor u = big.where(1.0, y).expm1();
      return big.where(half_exp(big.where(y, 21.0)), 0.5 * (u + u / (u + 1.0)));
    });
  });
}

Tensor Tensor::cosh() const {
  detail::state(*this, "cosh");
  return widened(to_float(*this), [](const Tensor& x) {
    // 1 + 2 sinh(y/2)^2 below y = |x| = 1 (so the gradient, sinh, keeps its precision near 0);
    // else e^y / 2 + 1 / (2 e^y), with e^y / 2 from half_exp.
    Tensor y = magnitude(x);
    Tensor small = y < 1.0;
    Tensor h = (small.where(y, 0.0) * 0.5).sinh();
    Tensor e = half_exp(small.where(1.0, y));
    return small.where(1.0 + 2.0 * h * h, e + 0.25 / e);
  });
}

Tensor Tensor::asinh() const {
  detail::state(*this, "asinh");
  return widened(to_float(*this), [](const Tensor& x) {
    return odd(x, [](const Tensor& y) {
      // log(y + sqrt(y^2 + 1)) = log1p(y + y^2 / (1 + sqrt(y^2 + 1))); log(2y) for large y.
      Tensor big = y > kLogLimit;
      Tensor s = big.where(0.0, y), b = big.where(y, 1.0);
      Tensor small = (s + s * s / (1.0 + (s * s + 1.0).sqrt())).log1p();
      return big.where(b.log() + kLn2, small);
    });
  });
}

Tensor Tensor::acosh() const {
  detail::state(*this, "acosh");
  return widened(to_float(*this), [](const Tensor& x) {
    // log1p(t + sqrt(t) sqrt(t + 2)) with t = x - 1 (exact near 1); log(2x) for large x.
    // (sqrt(t (t + 2)) gave the gradient inf * 0 = NaN at x = 1; torch's is inf.) At x = 1,
    // sqrt(2 (x - 1)), the leading term, whose derivatives are torch's, inf and -inf (the
    // product's second was inf * 0 = NaN); the others then read x = 2.
    Tensor edge = x == 1.0, big = x > kLogLimit;
    Tensor t = (big | edge).where(1.0, x - 1.0), b = big.where(x, 1.0);
    Tensor at_edge = (2.0 * (edge.where(x, 2.0) - 1.0)).sqrt();
    return edge.where(at_edge,
                      big.where(b.log() + kLn2, (t + t.sqrt() * (t + 2.0).sqrt()).log1p()));
  });
}

Tensor Tensor::atanh() const {
  detail::state(*this, "atanh");
  // (log(1 + x) - log(1 - x)) / 2: 1 + x and 1 - x are exact near |x| = 1, where the usual
  // log1p(2x / (1 - x)) loses the quotient's rounding (4e-3 relative at x = -0.999999).
  return widened(to_float(*this), [](const Tensor& x) { return 0.5 * (x.log1p() - (-x).log1p()); });
}

Tensor Tensor::atan() const {
  detail::state(*this, "atan");
  return widened(to_float(*this), [](const Tensor& x) {
    return odd(x, [](const Tensor& y) {
      // y > 1: pi/2 - atan(1/y).
      Tensor big = y > 1.0;
      Tensor r = atan_unit(big.where(1.0 / big.where(y, 1.0), y));
      return big.where(kPi / 2 - r, r);
    });
  });
}

Tensor Tensor::asin() const {
  detail::state(*this, "asin");
  return widened(to_float(*this), [](const Tensor& x) {
    // |x| <= 1/sqrt(2): atan(x / s), s = sqrt(1 - x^2); beyond, +-(pi/2 - atan(s / |x|)).
    // At |x| = 1 asin_at_edge, and the atan form reads 0 (where its gradient is finite).
    Tensor edge = magnitude(x) == 1.0;
    ArcParts a = arc_parts(edge.where(0.0, x));
    Tensor inside = a.mid.where(a.inner, (x < 0.0).where(a.outer - kPi / 2, kPi / 2 - a.outer));
    return edge.where(asin_at_edge(x, edge), inside);
  });
}

Tensor Tensor::acos() const {
  detail::state(*this, "acos");
  return widened(to_float(*this), [](const Tensor& x) {
    // pi/2 - asin(x) in the middle; atan(s / x) above 1/sqrt(2), where acos is small (no
    // cancellation), and pi - atan(s / |x|) below -1/sqrt(2).
    // At |x| = 1, pi/2 - asin_at_edge (0 and pi).
    Tensor edge = magnitude(x) == 1.0;
    ArcParts a = arc_parts(edge.where(0.0, x));
    Tensor inside = a.mid.where(kPi / 2 - a.inner, (x < 0.0).where(kPi - a.outer, a.outer));
    return edge.where(kPi / 2 - asin_at_edge(x, edge), inside);
  });
}

Tensor Tensor::isfinite() const {
  if (!dt(*this).is_float()) return Tensor::ones(shape(), PG_DTYPE_BOOL, device());
  return *this - *this == 0.0;  // inf - inf and NaN - NaN are NaN
}

// ---- activations ----------------------------------------------------------------------------

Tensor Tensor::logsigmoid() const {
  return -(-to_float(*this)).softplus();
}

Tensor Tensor::softsign() const {
  // x / (1 + |x|), and for |x| >= 1 the equal sign(x) (1 - 1 / (1 + |x|)), whose gradient
  // 1 / (1 + |x|)^2 does not come out of a cancellation (4e-6 relative at x = 100). At the
  // kink x = 0, x itself: torch's second derivative there is 0 (the right side's was -2).
  Tensor x = to_float(*this);
  Tensor r = odd(x, [](const Tensor& y) {
    Tensor big = y >= 1.0;
    return big.where(1.0 - 1.0 / (1.0 + big.where(y, 1.0)), y / (1.0 + y));
  });
  return (x == 0.0).where(x, r);
}

Tensor Tensor::selu() const {
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  Tensor x = to_float(*this), pos = x > 0.0, zero = x == 0.0;  // (0: as elu's)
  return scale * pos.where(x, zero.where(alpha * x, alpha * pos.where(0.0, x).expm1()));
}

Tensor Tensor::celu(double alpha) const {
  if (alpha == 0.0) user_error("celu: alpha must not be 0");
  Tensor x = to_float(*this), pos = x > 0.0, zero = x == 0.0;  // (0: as elu's)
  return pos.where(x, zero.where(x, alpha * (pos.where(0.0, x) * (1.0 / alpha)).expm1()));
}

}  // namespace polygrad
