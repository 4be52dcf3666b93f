// Symbolic sizes: a tensor dimension that is a variable bound to a value, as tinygrad's
// `Variable("n", 1, 64).bind(7)`.
//
// A graph built over a bound variable is scheduled and compiled once per variable, not per
// value: a later graph of the same structure with the variable bound to another value (a KV
// cache one position longer, a new sequence length or batch size) reuses the schedule and the
// compiled kernels, which take the value at launch (docs/compiler.md, "Symbolic sizes").
//
//   Variable n("n", 1, 1024);
//   Tensor k = shrink(cache, {{0, n.bind(pos)}, {0, 64}});   // (pos, 64), pos symbolic
//   Tensor out = (q.matmul(k.T()) * 0.125).softmax(-1).matmul(v);
//
// A Tensor's shape() reports the bound values (ints). Reshapes, broadcasts, matmul, reductions
// and mean carry the variable through; an op that works a size out as a plain int loses it,
// and its graph is then scheduled for each value (still correct, compiled per value).
#ifndef POLYGRAD_SYMBOLIC_HPP
#define POLYGRAD_SYMBOLIC_HPP

#include <polygrad/export.hpp>
#include <polygrad/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace polygrad {

namespace detail {
struct SizeExpr;
}  // namespace detail

/// A size: a static int, or a variable bound to a value (Variable::bind).
class POLYGRAD_API Dim {
 public:
  /// A static size.
  Dim(int64_t value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  /// The size (the bound value of a variable).
  int64_t value() const { return value_; }
  /// Whether it is a bound variable.
  bool symbolic() const { return expr_ != nullptr; }
  /// The expression behind a symbolic size (core internal).
  const std::shared_ptr<const detail::SizeExpr>& expr() const { return expr_; }
  /// A size of `value` that is `expr` (core internal: Variable::bind and the operators).
  Dim(int64_t value, std::shared_ptr<const detail::SizeExpr> expr)
      : value_(value), expr_(std::move(expr)) {}

 private:
  int64_t value_ = 0;
  std::shared_ptr<const detail::SizeExpr> expr_;
};

/// A named size with inclusive bounds [min, max]; bind gives it a value.
class POLYGRAD_API Variable {
 public:
  /// A user error when min > max or min < 0, or the name is empty.
  Variable(std::string name, int64_t min, int64_t max);
  /// The variable bound to `value`; a user error naming the variable and the value when the
  /// value is outside [min, max].
  Dim bind(int64_t value) const;
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

 private:
  std::string name_;
  int64_t min_ = 0, max_ = 0;
};

/// Sizes worked out from bound variables stay expressions of them (a cache's length before a
/// new entry, `MAX - n` rows of padding); their values are the values' sum and product.
POLYGRAD_API Dim operator+(const Dim& a, const Dim& b);
POLYGRAD_API Dim operator-(const Dim& a, const Dim& b);
POLYGRAD_API Dim operator*(const Dim& a, int64_t k);
inline Dim operator*(int64_t k, const Dim& a) {
  return a * k;
}

/// Tensor::reshape with sizes that may be bound variables (no -1).
POLYGRAD_API Tensor reshape(const Tensor& t, const std::vector<Dim>& shape);
/// Tensor::shrink with per-axis [begin, end) that may be bound variables.
POLYGRAD_API Tensor shrink(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& bounds);
/// Tensor::expand with sizes that may be bound variables.
POLYGRAD_API Tensor expand(const Tensor& t, const std::vector<Dim>& shape);
/// Tensor::pad with zeros, per-axis (before, after) counts that may be bound variables.
POLYGRAD_API Tensor pad(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& pads);

}  // namespace polygrad

#endif  // POLYGRAD_SYMBOLIC_HPP
