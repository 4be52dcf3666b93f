// The C++ face of runtime capture (polygrad/capture.hpp).
#include <polygrad/capture.hpp>

#include "runtime/capture.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/error.hpp>

#include <set>

namespace polygrad {

namespace detail {

namespace {
thread_local std::set<std::shared_ptr<TensorImpl>> t_grads_before;
}

void begin_capture() {
  runtime::capture_begin();
  for (const auto& leaf : live_grad_leaves())
    if (leaf->grad) t_grads_before.insert(leaf->grad);
}

std::shared_ptr<runtime::Capture> end_capture() {
  t_grads_before.clear();
  return runtime::capture_end();
}

bool grad_predates_capture(const TensorImpl* grad) {
  for (const auto& g : t_grads_before)
    if (g.get() == grad) return true;
  return false;
}

}  // namespace detail

void Captured::run() const {
  if (!impl_) user_error("capture: run on an empty Captured");
  impl_->run();
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
