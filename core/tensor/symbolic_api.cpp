// The public symbolic-size API (polygrad/symbolic.hpp).
#include "tensor/symbolic.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/symbolic.hpp>

namespace polygrad {

namespace detail {
struct SizeExpr {
  UOpRef node;
};
}  // namespace detail

namespace {

UOpRef expr_of(const Dim& d) {
  return d.symbolic() ? d.expr()->node : lazy::dim_const(d.value());
}

std::string dims_str(const std::vector<Dim>& dims) {
  lazy::Shape s;
  for (const Dim& d : dims) s.push_back(d.value());
  return lazy::shape_str(s);
}

}  // namespace

Variable::Variable(std::string name, int64_t min, int64_t max)
    : name_(std::move(name)), min_(min), max_(max) {
  lazy::bind_var(name_, min_, max_, min_);  // (checks the name and the bounds)
}

Dim Variable::bind(int64_t value) const {
  return Dim(value, std::make_shared<const detail::SizeExpr>(
                        detail::SizeExpr{lazy::bind_var(name_, min_, max_, value)}));
}

Dim operator+(const Dim& a, const Dim& b) {
  if (!a.symbolic() && !b.symbolic()) return Dim(a.value() + b.value());
  return Dim(a.value() + b.value(), std::make_shared<const detail::SizeExpr>(
                                        detail::SizeExpr{lazy::dim_add(expr_of(a), expr_of(b))}));
}

Dim operator-(const Dim& a, const Dim& b) {
  return a + b * -1;
}

Dim operator*(const Dim& a, int64_t k) {
  if (!a.symbolic() || k == 0) return Dim(a.value() * k);
  return Dim(a.value() * k, std::make_shared<const detail::SizeExpr>(
                                detail::SizeExpr{lazy::dim_mul(expr_of(a), lazy::dim_const(k))}));
}

Tensor reshape(const Tensor& t, const std::vector<Dim>& shape) {
  const detail::TensorImpl& p = detail::state(t, "reshape");
  lazy::Shape s;
  lazy::SymShape dims;
  for (const Dim& d : shape) {
    if (d.value() < 0) user_error("reshape: negative size in " + dims_str(shape));
    s.push_back(d.value());
    dims.push_back(expr_of(d));
  }
  detail::checked_numel("reshape", s);
  if (lazy::numel(s) != lazy::numel(p.shape))
    user_error("reshape: cannot reshape " + lazy::shape_str(p.shape) + " to " + dims_str(shape));
  if (!lazy::has_symbolic(dims)) return t.reshape(s);
  // An axis given as an int keeps the expression the source's axes give it.
  const lazy::SymShape inferred = lazy::reshape_dims(lazy::sym_shape(p.uop.get()), p.shape, s);
  for (size_t i = 0; i < dims.size(); ++i)
    if (lazy::is_static(dims[i].get())) dims[i] = inferred[i];
  // A reshape of a reshape is one of its source (a realised (n, d) input viewed as (n, d) with
  // n bound: the buffer's count then follows the variable, runtime/schedule_cache.cpp).
  const UOpRef& src = p.uop->op() == Op::RESHAPE ? p.uop->src(0) : p.uop;
  return detail::make(lazy::reshape_sym(src, dims), s, p.device);
}

Tensor shrink(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& bounds) {
  const detail::TensorImpl& p = detail::state(t, "shrink");
  if (bounds.size() != p.shape.size())
    user_error("shrink: " + std::to_string(bounds.size()) + " bounds for shape " +
               lazy::shape_str(p.shape));
  bool symbolic = false;
  std::vector<std::pair<int64_t, int64_t>> ints;
  std::vector<std::pair<UOpRef, UOpRef>> exprs;
  for (const auto& [b, e] : bounds) {
    symbolic = symbolic || b.symbolic() || e.symbolic();
    ints.emplace_back(b.value(), e.value());
    exprs.emplace_back(expr_of(b), expr_of(e));
  }
  if (!symbolic) return t.shrink(ints);
  lazy::Shape s;
  for (size_t i = 0; i < ints.size(); ++i) {
    auto [b, e] = ints[i];
    if (b < 0 || e < b || e > p.shape[i])
      user_error("shrink: bounds (" + std::to_string(b) + ", " + std::to_string(e) +
                 ") out of range for axis " + std::to_string(i) + " of shape " +
                 lazy::shape_str(p.shape));
    s.push_back(e - b);
  }
  return detail::make(lazy::shrink_sym(p.uop, exprs), s, p.device);
}

Tensor expand(const Tensor& t, const std::vector<Dim>& shape) {
  const detail::TensorImpl& p = detail::state(t, "expand");
  lazy::Shape s;
  lazy::SymShape dims;
  for (const Dim& d : shape) {
    s.push_back(d.value());
    dims.push_back(expr_of(d));
  }
  if (!lazy::has_symbolic(dims)) return t.expand(s);
  if (s.size() < p.shape.size())
    user_error("expand: cannot expand " + lazy::shape_str(p.shape) + " to " + dims_str(shape));
  detail::broadcast_to("expand", t, s);  // (checks the shapes)
  const lazy::SymShape mine = lazy::sym_shape(p.uop.get());
  lazy::Shape padded(s.size() - p.shape.size(), 1);
  padded.insert(padded.end(), p.shape.begin(), p.shape.end());
  const lazy::SymShape padded_dims = lazy::broadcast_dims(mine, padded, {});
  const lazy::SymShape kept = lazy::broadcast_dims(padded_dims, s, dims);
  UOpRef u = padded == p.shape ? p.uop : lazy::reshape_sym(p.uop, padded_dims);
  return detail::make(lazy::expand_sym(u, kept), s, p.device);
}

Tensor pad(const Tensor& t, const std::vector<std::pair<Dim, Dim>>& pads) {
  const detail::TensorImpl& p = detail::state(t, "pad");
  if (pads.size() != p.shape.size())
    user_error("pad: " + std::to_string(pads.size()) + " pad pairs for shape " +
               lazy::shape_str(p.shape));
  bool symbolic = false;
  std::vector<std::pair<int64_t, int64_t>> ints;
  std::vector<std::pair<UOpRef, UOpRef>> exprs;
  lazy::Shape s = p.shape;
  for (size_t i = 0; i < pads.size(); ++i) {
    const auto& [a, b] = pads[i];
    if (a.value() < 0 || b.value() < 0)
      user_error("pad: negative pad on axis " + std::to_string(i));
    symbolic = symbolic || a.symbolic() || b.symbolic();
    ints.emplace_back(a.value(), b.value());
    exprs.emplace_back(expr_of(a), expr_of(b));
    s[i] += a.value() + b.value();
  }
  if (!symbolic) return t.pad(ints);
  detail::checked_numel("pad", s);
  return detail::make(lazy::pad_sym(p.uop, exprs), s, p.device);
}

}  // namespace polygrad
