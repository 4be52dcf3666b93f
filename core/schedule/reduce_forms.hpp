// Rewrites of a reduce's body into cheaper forms, made while a kernel's AST is built (see
// kernel_reduce.cpp): a one-hot selection becomes one load, a factor that the reduced ranges
// do not move leaves the loop.
#ifndef POLYGRAD_SCHEDULE_REDUCE_FORMS_HPP
#define POLYGRAD_SCHEDULE_REDUCE_FORMS_HPP

#include "ir/uop.hpp"

#include <set>
#include <vector>

namespace polygrad::schedule {

/// Whether `e` uses any of `ranges`.
bool uses_any(const UOpRef& e, const std::set<const UOp*>& ranges);
/// `e` without the int casts around it.
const UOp* strip_int_casts(const UOp* e);

/// A sum over one range r < n of where(e == r, x, 0) (perhaps cast), e an int free of r: a
/// one-hot selection (gather, an embedding's lookup, over an iota). It is x at r = e where
/// 0 <= e < n, else 0: one load instead of n. (x reads r clamped into range, so a load never
/// leaves its buffer.) Null when `value` is not of that form.
UOpRef pick_one_hot(const UOpRef& value, const UOpRef& r);

/// A sum over `ranges` of a product (a float32, float64 or int value) whose factors split into
/// ones that move with the ranges and ones that do not: the product of the moving factors is
/// left in `value` and the others' product is returned, so sum(x * c) = c * sum(x). Null (and
/// `value` unchanged) when no factor is free of the ranges or none moves.
UOpRef factor_out_invariant(UOpRef& value, const std::vector<UOpRef>& ranges);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_REDUCE_FORMS_HPP
