#include "autograd/backward.hpp"

#include "autograd/gradient.hpp"
#include "tensor/tensor_impl.hpp"

namespace polygrad::autograd {

namespace {

Tensor wrap(UOpRef uop, const detail::TensorImpl& like) {
  return detail::make(std::move(uop), like.shape, like.device);
}

/// The gradient fed into root: `root_grad` checked against root, or ones for a one-element root.
UOpRef seed(const char* op, const detail::TensorImpl& root,
            const std::optional<Tensor>& root_grad) {
  if (!root_grad) {
    if (lazy::numel(root.shape) != 1)
      user_error(std::string(op) + ": the root has shape " + lazy::shape_str(root.shape) +
                 "; without a root gradient it must have one element");
    return lazy::full(root.uop->dtype(), 1, root.shape);
  }
  const detail::TensorImpl& g = detail::state(*root_grad, op);
  if (!g.uop->dtype().is_float())
    user_error(std::string(op) + ": the root gradient is " + g.uop->dtype().name() +
               "; it must be a float tensor");
  if (g.shape != root.shape)
    user_error(std::string(op) + ": root gradient shape " + lazy::shape_str(g.shape) +
               " does not match the root's " + lazy::shape_str(root.shape));
  return lazy::cast(g.uop, root.uop->dtype());
}

}  // namespace

std::vector<Tensor> gradient(const Tensor& root, const std::vector<Tensor>& targets,
                             const std::optional<Tensor>& root_grad) {
  const detail::TensorImpl& r = detail::state(root, "gradient");
  std::vector<UOpRef> target_uops;
  for (const Tensor& t : targets) target_uops.push_back(detail::state(t, "gradient").uop);
  std::vector<UOpRef> grads =
      autograd::gradient(r.uop, seed("gradient", r, root_grad), target_uops);
  std::vector<Tensor> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    const detail::TensorImpl& t = *targets[i].impl();
    if (!grads[i])
      user_error("gradient: the root does not depend on target " + std::to_string(i) + " " +
                 lazy::shape_str(t.shape));
    out.push_back(wrap(grads[i], t));
  }
  return out;
}

void backward(const Tensor& root, const std::optional<Tensor>& root_grad) {
  const detail::TensorImpl& r = detail::state(root, "backward");
  if (!r.uop->dtype().is_float())
    user_error("backward: the root is " + r.uop->dtype().name() +
               "; only float tensors have gradients");
  UOpRef g = seed("backward", r, root_grad);
  // Every live leaf is a target; those the root does not reach come back without a gradient
  // (no separate walk of the graph to find which are in it).
  std::vector<std::shared_ptr<detail::TensorImpl>> leaves = detail::live_grad_leaves();
  std::vector<UOpRef> targets;
  targets.reserve(leaves.size());
  for (const auto& leaf : leaves) targets.push_back(leaf->uop);
  std::vector<UOpRef> grads = autograd::gradient(r.uop, g, targets);
  bool any = false;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!grads[i]) continue;
    any = true;
    if (leaves[i]->grad && detail::grad_predates_capture(leaves[i]->grad.get()))
      user_error("backward: a parameter of shape " + lazy::shape_str(leaves[i]->shape) +
                 " holds a gradient from before the capture began; every run would add that "
                 "stale value again. Clear gradients (zero_grad) before capturing");
  }
  if (!any)
    user_error(std::string("backward: the root ") +
               (lazy::is_realized(r.uop.get())
                    ? "was realised (its values were read) before backward(), so its graph is "
                      "gone: call backward() before item() or to_vector()"
                    : "depends on no tensor that requires grad"));
  for (size_t i = 0; i < leaves.size(); ++i) {
    detail::TensorImpl& leaf = *leaves[i];
    if (!grads[i]) continue;
    Tensor fresh = wrap(grads[i], leaf);
    leaf.grad = leaf.grad ? (Tensor(leaf.grad) + fresh).impl() : fresh.impl();
  }
}

}  // namespace polygrad::autograd
