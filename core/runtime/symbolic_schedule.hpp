// Kernels generalised over a bound variable, from schedules of one graph at several values.
//
// The schedule cache schedules a graph over a variable n (tensor/symbolic.hpp) at its bound
// value and at probe values of n (the graph rebound, its shapes checked). Every integer a
// schedule holds (a kernel's extents, strides and offsets, a launch variable's value, a
// buffer's size, a copy's bytes, an output's shape) that differs between them must be one
// polynomial a*n*n + b*n + c in n with integer coefficients that fits every probe; the kernels
// then take n at launch as a DEFINE_VAR of that name. Anything else (schedules of different
// structure, a float constant that differs) leaves the graph scheduled per value.
#ifndef POLYGRAD_RUNTIME_SYMBOLIC_SCHEDULE_HPP
#define POLYGRAD_RUNTIME_SYMBOLIC_SCHEDULE_HPP

#include "ir/uop.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace polygrad::runtime {

/// An integer as a function of the variable: a*n*n + b*n + c.
struct SizeRule {
  int64_t a = 0, b = 0, c = 0;
  int64_t at(int64_t n) const { return (a * n + b) * n + c; }
  bool constant() const { return a == 0 && b == 0; }
};

/// The rule through (ts[i], qs[i]) for every i (at least 3 points, distinct ts), or nothing.
std::optional<SizeRule> fit_rule(const std::vector<int64_t>& ts, const std::vector<int64_t>& qs);

/// Whether two kernel ASTs differ in their integer constants' values at most.
bool same_kernel_structure(const UOpRef& a, const UOpRef& b);

/// The kernel that `asts` (one kernel AST per value ts[i] of the variable `var`) all are, with
/// its integer constants as rules of `var`; nothing when the ASTs differ in anything else or
/// a constant fits no rule.
std::optional<UOpRef> generalize_kernel(const std::vector<UOpRef>& asts,
                                        const std::vector<int64_t>& ts, const UOpRef& var);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_SYMBOLIC_SCHEDULE_HPP
