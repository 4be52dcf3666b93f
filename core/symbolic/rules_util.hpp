// Small helpers shared by the symbolic rule files.
#ifndef POLYGRAD_SYMBOLIC_RULES_UTIL_HPP
#define POLYGRAD_SYMBOLIC_RULES_UTIL_HPP

#include "rewrite/rule_set.hpp"
#include "symbolic/bounds.hpp"

namespace polygrad::detail {

inline bool not_const(const UOp& u) {
  return u.op() != Op::CONST;
}
inline bool positive_const(const UOp& u) {
  return u.op() == Op::CONST && std::holds_alternative<int64_t>(u.arg()) && u.arg_int() > 0;
}
/// A variable `name` that matches int-typed nodes only.
inline Pattern ivar(const char* name) {
  return var(name).dtype(is_int_dtype);
}
/// The int value of the CONST bound to `name`.
inline int64_t cval(const Match& m, std::string_view name) {
  return m[name]->arg_int();
}
/// -v without signed overflow (the result is wrapped to the dtype by const_int).
inline int64_t neg_wrap(int64_t v) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(v));
}

/// Exact 128-bit range of x*c + y (y optional) from the bounds of x and y, when x*c + y cannot
/// wrap in dtype t; nullopt otherwise.
inline std::optional<Bounds> linear_no_wrap(DType t, const UOpRef& x, int64_t c, const UOp* y) {
  auto bx = bounds(x);
  if (!bx) return std::nullopt;
  __int128 lo = static_cast<__int128>(bx->lo) * c, hi = static_cast<__int128>(bx->hi) * c;
  if (lo > hi) std::swap(lo, hi);
  if (!fits(t, lo, hi)) return std::nullopt;
  if (y) {
    auto by = bounds(*y);
    if (!by) return std::nullopt;
    lo += by->lo;
    hi += by->hi;
    if (!fits(t, lo, hi)) return std::nullopt;
  }
  return Bounds{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

}  // namespace polygrad::detail

#endif  // POLYGRAD_SYMBOLIC_RULES_UTIL_HPP
