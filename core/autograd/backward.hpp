// Autograd on Tensors: Tensor-level gradient() and backward(), built on autograd::gradient over
// the tensors' lazy graphs. The Tensor class and the C API call these.
#ifndef POLYGRAD_AUTOGRAD_BACKWARD_HPP
#define POLYGRAD_AUTOGRAD_BACKWARD_HPP

#include <polygrad/tensor.hpp>

#include <optional>
#include <vector>

namespace polygrad::autograd {

/// Gradients of `root` w.r.t. each target (lazy tensors with the targets' shapes and devices).
/// `root_grad` defaults to ones and then root must have one element. User errors (naming
/// "gradient"): a null handle, a non-float root or target, a root_grad of another shape, a
/// target the root does not depend on.
std::vector<Tensor> gradient(const Tensor& root, const std::vector<Tensor>& targets,
                             const std::optional<Tensor>& root_grad = std::nullopt);

/// Adds d(root)/d(leaf) to the grad of every live tensor with requires_grad that root depends
/// on (lazily: the grads are graphs until realised). `root_grad` as for gradient(), with errors
/// naming "backward".
void backward(const Tensor& root, const std::optional<Tensor>& root_grad = std::nullopt);

}  // namespace polygrad::autograd

#endif  // POLYGRAD_AUTOGRAD_BACKWARD_HPP
