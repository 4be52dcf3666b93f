// Activation functions, composed from element-wise ops.
#include "tensor/tensor_impl.hpp"

#include <cmath>

namespace polygrad {

Tensor Tensor::relu() const {
  return (*this > 0).where(*this, 0);
}
Tensor Tensor::relu6() const {
  return relu() - (*this - 6).relu();
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  return (*this > 0).where(*this, *this * neg_slope);
}
Tensor Tensor::sigmoid() const {
  return 1.0 / (1.0 + (-detail::to_float(*this)).exp());
}
Tensor Tensor::tanh() const {
  return 2.0 * (detail::to_float(*this) * 2.0).sigmoid() - 1.0;
}
Tensor Tensor::gelu() const {
  const double k = std::sqrt(2.0 / M_PI);
  Tensor x = detail::to_float(*this);
  return 0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh());
}
Tensor Tensor::quick_gelu() const {
  return *this * (*this * 1.702).sigmoid();
}
Tensor Tensor::silu() const {
  return *this * sigmoid();
}
Tensor Tensor::elu(double alpha) const {
  return (*this > 0).where(*this, alpha * (exp() - 1.0));
}
Tensor Tensor::softplus(double beta) const {
  // log(1 + e^(bx)) / b, written so large |bx| neither overflows nor loses the linear part.
  Tensor bx = detail::to_float(*this) * beta;
  return (bx.relu() + (1.0 + (-bx.abs()).exp()).log()) * (1.0 / beta);
}
Tensor Tensor::mish() const {
  return *this * softplus().tanh();
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  return clamp(min_val, max_val);
}
Tensor Tensor::hardswish() const {
  return *this * (*this + 3.0).relu6() * (1.0 / 6.0);
}
Tensor Tensor::hardsigmoid() const {
  return (*this + 3.0).relu6() * (1.0 / 6.0);
}

}  // namespace polygrad
