// Activation functions, composed from element-wise ops.
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

using detail::widened;

Tensor Tensor::relu() const {
  // (x <= 0 selects 0, so NaN stays NaN as torch's relu keeps it, and the gradient at 0 is 0.)
  return (*this <= 0).where(0, *this);
}
Tensor Tensor::relu6() const {
  return hardtanh(0.0, 6.0);
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  return (*this > 0).where(*this, *this * neg_slope);
}
Tensor Tensor::sigmoid() const {
  // One SIGMOID node, its gradient g s (1 - s), expanded by the scheduler
  // (schedule/activations.hpp: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below, so neither
  // form overflows). It was 8 nodes here, and the gradient through them 3 selects.
  return widened(detail::to_float(*this),
                 [](const Tensor& x) { return detail::elementwise(Op::SIGMOID, {x}); });
}
Tensor Tensor::gelu() const {
  const double k = std::sqrt(2.0 / M_PI);
  return widened(detail::to_float(*this), [k](const Tensor& x) {
    return 0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh());
  });
}
Tensor Tensor::quick_gelu() const {
  return *this * (*this * 1.702).sigmoid();
}
Tensor Tensor::silu() const {
  return *this * sigmoid();
}
Tensor Tensor::elu(double alpha) const {
  // The negative branch sees min(x, 0): e^x of a large x, discarded, made its gradient NaN.
  // At 0 it is alpha x: torch's gradient alpha and second derivative 0 there (the kink).
  Tensor pos = *this > 0, zero = *this == 0;
  return pos.where(*this, zero.where(alpha * *this, alpha * pos.where(0.0, *this).expm1()));
}
Tensor Tensor::softplus(double beta) const {
  // torch's: log(1 + e^(bx)) / b, and x itself past bx = 20 (where they agree to float64's
  // last digits). Smooth at 0, so second derivatives are b/4 there (max(bx, 0) + log1p(e^-|bx|)
  // has kinks that dropped them); the exp sees at most 20, so the branch not taken keeps a
  // finite gradient. (A select, not minimum(bx, 20): at bx = 20 itself minimum's tie gave
  // the exp half the gradient, 1/2 where torch's is e^20 / (1 + e^20).)
  return widened(detail::to_float(*this), [beta](const Tensor& x) {
    Tensor bx = x * beta;
    Tensor above = bx > 20.0;
    return above.where(x, above.where(20.0, bx).exp().log1p() * (1.0 / beta));
  });
}
Tensor Tensor::mish() const {
  return widened(detail::to_float(*this), [](const Tensor& x) { return x * x.softplus().tanh(); });
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  // clamp's values, the lower bound applied first (so max_val everywhere when min_val >
  // max_val, as torch's); torch's gradient is 0 on the bounds (clamp's is 1 there).
  if (!detail::dt(*this).is_float())
    return clamp(Scalar::whole_or_float(min_val), Scalar::whole_or_float(max_val));
  Tensor lo = (*this <= min_val).where(min_val, *this);
  return (lo >= max_val).where(max_val, lo);
}
Tensor Tensor::hardswish() const {
  // torch's pieces: 0 below -3, x (x + 3) / 6 on [-3, 3], x above, so the gradient on the
  // bounds is the middle piece's, x / 3 + 1/2 (-1/2 at -3, 3/2 at 3), as torch's (x times
  // relu6, whose gradient is 0 on its bounds, gave 0 and 1 there). The middle piece sees 0
  // where it is not taken, so a NaN's gradient is x's 1, not 0 * NaN, and -inf's is 0.
  Tensor in = *this <= 3.0, below = *this < -3.0;
  Tensor xm = (in & below.logical_not()).where(*this, 0.0);
  Tensor mid = xm * (xm + 3.0) * (1.0 / 6.0);
  return below.where(0.0, in.where(mid, *this));
}
Tensor Tensor::hardsigmoid() const {
  // torch's gradient is 0 at NaN (relu6's is 1 there): a NaN passes through detached.
  Tensor nan = *this != *this;
  return nan.where(detach(), (*this + 3.0).relu6() * (1.0 / 6.0));
}

}  // namespace polygrad
