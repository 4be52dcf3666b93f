// Reductions: sum, max, min, prod, mean, var, std, argmax, argmin, cumsum.
#include "tensor/tensor_impl.hpp"

#include "tensor/symbolic.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace polygrad {

using detail::dt;

namespace {

// REDUCE_AXIS keeps reduced axes as 1; drop them unless keepdim.
Tensor reduce(const char* op, const Tensor& t, Op alu, const std::vector<int64_t>& axes,
              bool keepdim) {
  const detail::TensorImpl& p = detail::state(t, op);
  std::vector<int64_t> ax = detail::norm_axes(op, axes, p.shape);
  lazy::Shape kept = p.shape, dropped;
  for (size_t i = 0; i < kept.size(); ++i) {
    bool reduced = std::find(ax.begin(), ax.end(), static_cast<int64_t>(i)) != ax.end();
    if (reduced)
      kept[i] = 1;
    else
      dropped.push_back(p.shape[i]);
  }
  if (ax.empty()) return t;
  Tensor r = detail::make(lazy::reduce(p.uop, alu, ax), kept, p.device);
  if (!keepdim && lazy::any_bound()) {  // (the kept axes keep their expressions)
    const lazy::SymShape dims = lazy::sym_shape(r.impl()->uop.get());
    lazy::SymShape left;
    for (size_t i = 0; i < dims.size(); ++i)
      if (std::find(ax.begin(), ax.end(), static_cast<int64_t>(i)) == ax.end())
        left.push_back(dims[i]);
    if (lazy::has_symbolic(left))
      return detail::make(lazy::reshape_sym(r.impl()->uop, left), dropped, p.device);
  }
  return keepdim ? r : r.reshape(dropped);
}

// The accumulation dtype of sum: bool and small ints widen to 32 bits, float16 to float32.
DType sum_dtype(DType t) {
  if (t.is_bool()) return dtypes::int32;
  if (t.is_int() && t.scalar_size() < 4) return t.is_unsigned() ? dtypes::uint32 : dtypes::int32;
  return t;
}

int64_t count(const lazy::Shape& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[static_cast<size_t>(a)];
  return n;
}

// The element count n of a reduction as an integer constant cast to `type` (int32 when it fits:
// every device has int32). In a kernel the scheduler can tell such a count from any other float
// constant and take it from the batch variable (schedule/symbolic_sizes.hpp), so a mean or a
// variance over the batch compiles once for every batch size.
Tensor size_count(int64_t n, pg_dtype type, const std::string& device) {
  const pg_dtype int_type = n <= INT32_MAX ? PG_DTYPE_INT32 : PG_DTYPE_INT64;
  return Tensor::full({}, static_cast<double>(n), int_type, device).cast(type);
}

// The count of `t`'s `axes` as size_count makes it; over an axis whose size is a bound variable
// it is that variable's expression (tensor/symbolic.hpp), so a mean over it divides by the
// variable's value wherever the kernel runs.
Tensor size_count(const Tensor& t, const std::vector<int64_t>& axes, pg_dtype type) {
  const detail::TensorImpl& p = detail::state(t, "mean");
  const int64_t n = count(p.shape, axes);
  if (lazy::any_bound()) {
    const lazy::SymShape dims = lazy::sym_shape(p.uop.get());
    UOpRef e = lazy::dim_const(1);
    for (int64_t a : axes) e = lazy::dim_mul(e, dims[static_cast<size_t>(a)]);
    if (!lazy::is_static(e.get())) {
      const DType int_type = n <= INT32_MAX ? dtypes::int32 : dtypes::int64;
      return detail::make(UOp::make(Op::CAST, int_type, {e}), {}, p.device).cast(type);
    }
  }
  return size_count(n, type, p.device);
}

// torch's rule: a max or min over an axis of length 0 has no value (sum's is 0, prod's 1).
void nonempty(const char* op, const Tensor& t, const std::vector<int64_t>& axes) {
  const lazy::Shape& shape = detail::state(t, op).shape;
  for (int64_t a : detail::norm_axes(op, axes, shape))
    if (shape[static_cast<size_t>(a)] == 0)
      user_error(std::string(op) + ": cannot reduce over axis " + std::to_string(a) +
                 " of length 0 (shape " + lazy::shape_str(shape) + "): it has no identity");
}

}  // namespace

Tensor Tensor::sum(const std::vector<int64_t>& axes, bool keepdim) const {
  DType t = detail::state(*this, "sum").uop->dtype();
  DType acc = sum_dtype(t);
  bool half = t.scalar() == PG_DTYPE_FLOAT16 || t.scalar() == PG_DTYPE_BFLOAT16;
  if (half) return cast(PG_DTYPE_FLOAT32).sum(axes, keepdim).cast(t.scalar());
  return reduce("sum", cast(acc.scalar()), Op::ADD, axes, keepdim);
}
Tensor Tensor::sum(int64_t axis, bool keepdim) const {
  return sum(std::vector<int64_t>{axis}, keepdim);
}

Tensor detail::reduce_max(const Tensor& t, const std::vector<int64_t>& axes, bool keepdim) {
  if (detail::state(t, "max").uop->dtype().is_bool())
    return reduce_max(t.cast(PG_DTYPE_UINT8), axes, keepdim).bool_();
  return reduce("max", t, Op::MAX, axes, keepdim);
}

Tensor detail::centered(const char* op, const Tensor& x, const std::vector<int64_t>& axes) {
  const lazy::Shape& shape = detail::state(x, op).shape;
  std::vector<std::pair<int64_t, int64_t>> first;
  for (int64_t n : shape) first.emplace_back(0, n);
  bool shift = true;
  for (int64_t a : detail::norm_axes(op, axes, shape)) {
    shift = shift && shape[static_cast<size_t>(a)] > 0;  // (an empty axis has no first)
    first[static_cast<size_t>(a)] = {0, 1};
  }
  if (!shift) return x - x.mean(axes, true);
  // The mean as x0 + mean(x - x0), one value to subtract per output, not x0 and a mean (a
  // column variance's 8 column vectors of both spilled: 4.2 -> 6.3 ms at 4096 x 4096).
  const Tensor x0 = x.shrink(first).detach();
  return x - (x0 + (x - x0).mean(axes, true));
}

Tensor Tensor::max(const std::vector<int64_t>& axes, bool keepdim) const {
  nonempty("max", *this, axes);
  return detail::reduce_max(*this, axes, keepdim);
}
Tensor Tensor::max(int64_t axis, bool keepdim) const {
  return max(std::vector<int64_t>{axis}, keepdim);
}

Tensor Tensor::min(const std::vector<int64_t>& axes, bool keepdim) const {
  DType t = detail::state(*this, "min").uop->dtype();
  nonempty("min", *this, axes);
  if (t.is_bool()) return cast(PG_DTYPE_UINT8).min(axes, keepdim).bool_();
  if (t.is_float()) return -((-*this).max(axes, keepdim));
  auto inv = [](const Tensor& x) { return detail::elementwise(Op::NOT, {x}); };
  return inv(inv(*this).max(axes, keepdim));
}
Tensor Tensor::min(int64_t axis, bool keepdim) const {
  return min(std::vector<int64_t>{axis}, keepdim);
}

Tensor Tensor::prod(const std::vector<int64_t>& axes, bool keepdim) const {
  DType t = detail::state(*this, "prod").uop->dtype();
  return reduce("prod", cast(sum_dtype(t).scalar()), Op::MUL, axes, keepdim);
}
Tensor Tensor::prod(int64_t axis, bool keepdim) const {
  return prod(std::vector<int64_t>{axis}, keepdim);
}

// float16 and bfloat16 statistics are worked in float32 and rounded once (detail::widened,
// torch's): a sum of squares of a few hundred values of 100 is past float16's 65504.

Tensor Tensor::mean(const std::vector<int64_t>& axes, bool keepdim) const {
  const detail::TensorImpl& p = detail::state(*this, "mean");
  const std::vector<int64_t> norm = detail::norm_axes("mean", axes, p.shape);
  const int64_t n = count(p.shape, norm);
  return detail::widened(*this, [&](const Tensor& x) {
    Tensor s = detail::to_float(x).sum(axes, keepdim);
    if (n == 0) return s * NAN;
    return s * size_count(*this, norm, s.dtype()).reciprocal();
  });
}
Tensor Tensor::mean(int64_t axis, bool keepdim) const {
  return mean(std::vector<int64_t>{axis}, keepdim);
}

Tensor Tensor::var(const std::vector<int64_t>& axes, bool keepdim, double correction) const {
  const detail::TensorImpl& p = detail::state(*this, "var");
  const std::vector<int64_t> norm = detail::norm_axes("var", axes, p.shape);
  return detail::widened(*this, [&](const Tensor& w) {
    Tensor d = detail::centered("var", detail::to_float(w), axes);
    Tensor ss = (d * d).sum(axes, keepdim);
    // max(0, n - correction), n taken as a size like mean's count.
    Tensor denom = size_count(*this, norm, ss.dtype());
    if (correction != 0) denom = (denom - correction).maximum(0.0);
    return ss / denom;
  });
}
Tensor Tensor::var(int64_t axis, bool keepdim, double correction) const {
  return var(std::vector<int64_t>{axis}, keepdim, correction);
}
Tensor Tensor::std(const std::vector<int64_t>& axes, bool keepdim, double correction) const {
  detail::state(*this, "std");
  // Where the variance is 0, torch's gradient is 0 (a square root's would be 0 * inf = NaN):
  // the root is taken of 1 there and masked, so its value and its gradient are both 0.
  return detail::widened(*this, [&](const Tensor& x) {
    Tensor v = x.var(axes, keepdim, correction);
    Tensor flat = v == 0.0;
    return flat.where(0.0, flat.where(1.0, v).sqrt());
  });
}
Tensor Tensor::std(int64_t axis, bool keepdim, double correction) const {
  return std(std::vector<int64_t>{axis}, keepdim, correction);
}

namespace {

// Index of the first extreme along one axis: positions of the extreme weighted by n - i, whose
// max is n - first.
Tensor arg_extreme(const char* op, const Tensor& t, std::optional<int64_t> axis, bool keepdim,
                   bool is_max) {
  detail::state(t, op);
  nonempty(op, t, axis ? std::vector<int64_t>{*axis} : std::vector<int64_t>{});
  if (!axis || t.ndim() == 0) {  // (a 0-d tensor: axis 0 or -1, checked above)
    Tensor r = arg_extreme(op, t.flatten(), 0, false, is_max);
    return keepdim ? r.reshape(lazy::Shape(t.shape().size(), 1)) : r;
  }
  const int64_t a = detail::norm_axis(op, *axis, t.ndim(), t.shape());
  const int64_t n = t.shape()[static_cast<size_t>(a)];
  Tensor ext = is_max ? t.max(a, true) : t.min(a, true);
  // A NaN is the extreme (max and min propagate it), as torch's argmax says, though it equals
  // nothing: without this no position was hit and the index came out as n.
  Tensor hit = t == ext;
  if (detail::dt(t).is_float()) hit = hit | t.isnan();
  lazy::Shape idx_shape(t.shape().size(), 1);
  idx_shape[static_cast<size_t>(a)] = n;
  Tensor rev = (Scalar(n) - detail::iota(n, t.device())).reshape(idx_shape);  // n, n - 1, ..., 1
  Tensor w = hit.where(rev, 0);
  return n - w.max(a, keepdim);
}

}  // namespace

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  return arg_extreme("argmax", *this, axis, keepdim, true);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  return arg_extreme("argmin", *this, axis, keepdim, false);
}

namespace {

/// Inclusive prefix sums along the last axis (length n) as one masked sum:
/// out[i] = sum_j x[j] * (j <= i), n * n work.
Tensor triangular_cumsum(const Tensor& x, int64_t n, const std::string& device) {
  Tensor i = detail::iota(n, device).reshape({n, 1});
  Tensor j = detail::iota(n, device).reshape({1, n});
  return (j <= i).where(x.unsqueeze(-2), 0).sum(-1);
}

/// Bounds that keep every axis of `shape` whole except the last, which keeps [lo, hi).
std::vector<std::pair<int64_t, int64_t>> last_axis(const Tensor::Shape& shape, int64_t lo,
                                                   int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> b;
  for (int64_t d : shape) b.emplace_back(0, d);
  b.back() = {lo, hi};
  return b;
}

/// Inclusive prefix sums along the last axis. Up to 2 * kBlock elements: triangular. Longer
/// axes in blocks of kBlock: each block's own prefix sums plus the sum of the blocks before it
/// (the prefix sums of the block totals, shifted by one), so the masked work per element is
/// about kBlock + n / kBlock instead of n (a 4096-long axis: 272 instead of 4096).
Tensor cumsum_last(const Tensor& x, int64_t n, const std::string& device) {
  constexpr int64_t kBlock = 256;
  if (n <= 2 * kBlock) return triangular_cumsum(x, n, device);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::pair<int64_t, int64_t>> pad(x.shape().size(), {0, 0});
  pad.back() = {0, blocks * kBlock - n};
  Tensor::Shape split = x.shape();
  split.back() = blocks;
  split.push_back(kBlock);
  Tensor inner = triangular_cumsum(x.pad(pad).reshape(split), kBlock, device);  // (..., b, B)
  Tensor totals = inner.shrink(last_axis(inner.shape(), kBlock - 1, kBlock)).squeeze(-1);
  // Realised (one value per block): fused into the output, each element would redo the
  // prefix sums of its block totals.
  Tensor running = cumsum_last(totals, blocks, device).contiguous();  // (..., b)
  // The sum of the blocks before each block: the running totals shifted right by one.
  std::vector<std::pair<int64_t, int64_t>> shift(running.shape().size(), {0, 0});
  shift.back() = {1, 0};
  Tensor before = running.pad(shift).shrink(last_axis(running.shape(), 0, blocks));
  Tensor::Shape flat = x.shape();
  flat.back() = blocks * kBlock;
  // Realised in blocks, then viewed flat: written flat, the block and the position in it
  // would be divisions of the output index, which the codegen cannot vectorise.
  Tensor out = (inner + before.unsqueeze(-1)).contiguous().reshape(flat);
  return out.shrink(last_axis(flat, 0, n));
}

}  // namespace

Tensor Tensor::cumsum(int64_t axis) const {
  const detail::TensorImpl& p = detail::state(*this, "cumsum");
  if (p.shape.empty()) {
    detail::norm_axis("cumsum", axis, 1, p.shape);  // (axis 0 or -1: one element)
    return *this;
  }
  const int64_t a = detail::norm_axis("cumsum", axis, ndim(), p.shape);
  const int64_t n = p.shape[static_cast<size_t>(a)];
  Tensor x = detail::move_axis_last(*this, a);  // (..., n)
  return detail::move_last_to(cumsum_last(x, n, p.device), a);
}

}  // namespace polygrad
