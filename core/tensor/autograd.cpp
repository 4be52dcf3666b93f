// Tensor::backward and Tensor::gradient: thin wrappers over core/autograd/backward.hpp.
#include "autograd/backward.hpp"
#include "tensor/tensor_impl.hpp"

namespace polygrad {

void Tensor::backward() const {
  autograd::backward(*this);
}

void Tensor::backward(const Tensor& grad) const {
  autograd::backward(*this, grad);
}

std::vector<Tensor> Tensor::gradient(const Tensor& loss, const std::vector<Tensor>& targets) {
  return autograd::gradient(loss, targets);
}

}  // namespace polygrad
