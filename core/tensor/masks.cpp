// Masks and selections composed from comparisons and where: tril/triu, masked_fill, one_hot,
// any/all, logical and/or, lerp, outer and roll.
#include "tensor/tensor_impl.hpp"

#include <algorithm>
#include <optional>

namespace polygrad {

using detail::dt;

Tensor detail::triangle_mask(int64_t rows, int64_t cols, int64_t diagonal, bool lower,
                             const std::string& device) {
  // (j - i lies in (-rows, cols): a diagonal past that keeps all or nothing, and clamped
  // it fits the aranges' int32, which would wrap a larger one)
  diagonal = std::clamp<int64_t>(diagonal, -rows, cols);
  Tensor i = Tensor::arange(rows, device).reshape({rows, 1});
  Tensor j = Tensor::arange(cols, device).reshape({1, cols});
  return lower ? j - i <= Scalar(diagonal) : j - i >= Scalar(diagonal);
}

namespace {

// The elements of the last two axes in the triangle, others 0.
Tensor triangle(const char* op, const Tensor& x, int64_t k, bool lower) {
  detail::state(x, op);
  if (x.ndim() < 2)
    user_error(std::string(op) + ": shape " + lazy::shape_str(x.shape()) +
               " needs at least 2 dimensions");
  return detail::triangle_mask(x.size(-2), x.size(-1), k, lower, x.device())
      .where(x, detail::constant(0, dt(x), {}, x.device()));  // (x's dtype, bool included)
}

}  // namespace

Tensor Tensor::tril(int64_t diagonal) const {
  return triangle("tril", *this, diagonal, true);
}
Tensor Tensor::triu(int64_t diagonal) const {
  return triangle("triu", *this, diagonal, false);
}

Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  detail::state(*this, "masked_fill");
  detail::state(mask, "masked_fill");
  // The value takes this tensor's dtype (torch's); tensor and mask broadcast against each
  // other (torch's out-of-place masked_fill and tinygrad's mask.where(value, x)).
  detail::broadcast_shape("masked_fill", shape(), mask.shape());
  Tensor v = detail::constant(value, dt(*this), {}, device());
  return mask.bool_().where(v, *this);
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  detail::state(*this, "one_hot");
  if (dt(*this).is_float() || dt(*this).is_bool())
    user_error("one_hot: needs an integer tensor, not " + dt(*this).name());
  if (num_classes == -1) num_classes = max().cast(PG_DTYPE_INT64).item<int64_t>() + 1;
  if (num_classes <= 0)
    user_error("one_hot: num_classes must be positive, not " + std::to_string(num_classes));
  // (values in input data are checked, as torch checks them; computed ones give a zero row)
  if (const std::optional<int64_t> bad = detail::host_ints_outside(*this, 0, num_classes))
    user_error("one_hot: class " + std::to_string(*bad) + " is out of range for " +
               std::to_string(num_classes) + " classes");
  return detail::class_mask(*this, num_classes).cast(PG_DTYPE_INT32);
}

Tensor Tensor::any(const std::vector<int64_t>& axes, bool keepdim) const {
  return detail::reduce_max(bool_(), axes, keepdim);
}
Tensor Tensor::all(const std::vector<int64_t>& axes, bool keepdim) const {
  return detail::reduce_max(bool_().logical_not(), axes, keepdim).logical_not();
}

Tensor Tensor::logical_and(const Tensor& o) const {
  detail::broadcast_shape("logical_and", shape(), o.shape());  // (else the error is bitwise_and's)
  return bool_() & o.bool_();
}
Tensor Tensor::logical_or(const Tensor& o) const {
  detail::broadcast_shape("logical_or", shape(), o.shape());
  return bool_() | o.bool_();
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  const std::optional<Shape> self_end = detail::try_broadcast_shape(shape(), end.shape());
  if (!self_end || !detail::try_broadcast_shape(*self_end, weight.shape()))
    user_error("lerp: shapes " + lazy::shape_str(shape()) + ", end " +
               lazy::shape_str(end.shape()) + " and weight " + lazy::shape_str(weight.shape()) +
               " do not broadcast");
  // torch's two forms: exact at weight 0 (this) and at weight 1 (end).
  Tensor d = end - *this;
  return (weight < 0.5).where(*this + weight * d, end - d * (1.0 - weight));
}
Tensor Tensor::lerp(const Tensor& end, double weight) const {
  if (!detail::try_broadcast_shape(shape(), end.shape()))
    user_error("lerp: shapes " + lazy::shape_str(shape()) + " and end " +
               lazy::shape_str(end.shape()) + " do not broadcast");
  return weight < 0.5 ? *this + (end - *this) * weight : end - (end - *this) * (1.0 - weight);
}

Tensor Tensor::outer(const Tensor& o) const {
  if (ndim() != 1 || o.ndim() != 1)
    user_error("outer: shapes " + lazy::shape_str(shape()) + " and " + lazy::shape_str(o.shape()) +
               " must both be 1-d");
  return unsqueeze(1) * o.unsqueeze(0);
}

Tensor Tensor::roll(const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) const {
  detail::state(*this, "roll");
  if (dims.empty()) {
    if (shifts.size() != 1)
      user_error("roll: without dims, one shift (of the flattened tensor), not " +
                 std::to_string(shifts.size()));
    return flatten().roll(shifts, {0}).reshape(shape());
  }
  if (shifts.size() != dims.size())
    user_error("roll: " + std::to_string(shifts.size()) + " shifts for " +
               std::to_string(dims.size()) + " dims");
  Tensor r = *this;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::norm_axis("roll", dims[i], ndim(), shape());
    const int64_t n = size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // The last s elements first: cat(x[n - s:], x[:n - s]).
    std::vector<Tensor> parts = r.split({n - s, s}, d);
    r = Tensor::cat({parts[1], parts[0]}, d);
  }
  return r;
}

}  // namespace polygrad
