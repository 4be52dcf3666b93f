// The C++ face of runtime capture (polygrad/capture.hpp).
#include <polygrad/capture.hpp>

#include "runtime/capture.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/error.hpp>

#include <map>

namespace polygrad {

namespace detail {

namespace {
// The gradients that existed when this thread's capture began, held alive so that no new
// gradient can reuse an address.
thread_local std::map<const TensorImpl*, std::shared_ptr<TensorImpl>> t_grads_before;
}  // namespace

void begin_capture() {
  runtime::capture_begin();
  for (const auto& leaf : live_grad_leaves())
    if (leaf->grad) t_grads_before.emplace(leaf->grad.get(), leaf->grad);
}

std::shared_ptr<runtime::Capture> end_capture() {
  t_grads_before.clear();
  return runtime::capture_end();
}

bool grad_predates_capture(const TensorImpl* grad) {
  return t_grads_before.count(grad) != 0;
}

}  // namespace detail

void Captured::run() const {
  if (!impl_) user_error("capture: run on an empty Captured");
  impl_->run();
}

void Captured::run(const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& replacements) const {
  if (!impl_) user_error("capture: run on an empty Captured");
  if (inputs.size() != replacements.size())
    user_error("capture: " + std::to_string(inputs.size()) + " inputs but " +
               std::to_string(replacements.size()) + " replacements");
  std::vector<Tensor> fresh = replacements;
  Tensor::realize_all(fresh);
  std::vector<const UOp*> from, to;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const detail::TensorImpl& in = detail::state(inputs[i], "capture");
    const detail::TensorImpl& re = detail::state(fresh[i], "capture");
    if (!lazy::is_realized(in.uop.get()))
      user_error("capture: input " + std::to_string(i) + " is not a realised tensor");
    if (in.shape != re.shape)
      user_error("capture: replacement " + std::to_string(i) + " has shape " +
                 lazy::shape_str(re.shape) + ", the input " + lazy::shape_str(in.shape));
    // One buffer given twice (a function called with x for two arguments) takes one
    // replacement: the same one twice is fine, two different ones an error.
    const UOp* buffer = lazy::realized_buffer(in.uop.get());
    const UOp* replacement = lazy::realized_buffer(re.uop.get());
    bool seen = false;
    for (size_t j = 0; j < from.size(); ++j)
      if (from[j] == buffer) {
        if (to[j] != replacement)
          user_error("capture: inputs " + std::to_string(j) + " and " + std::to_string(i) +
                     " are the same buffer with different replacements");
        seen = true;
      }
    if (seen) continue;
    from.push_back(buffer);
    to.push_back(replacement);
  }
  impl_->run(from, to);
}

size_t Captured::kernel_count() const {
  return impl_ ? impl_->kernel_count() : 0;
}

Captured Captured::adopt(std::shared_ptr<const runtime::Capture> recording) {
  Captured c;
  c.impl_ = std::move(recording);
  return c;
}

Captured capture(const std::function<void()>& fn) {
  detail::begin_capture();
  try {
    fn();
  } catch (...) {
    detail::end_capture();
    throw;
  }
  return Captured::adopt(detail::end_capture());
}

}  // namespace polygrad
