// tanh and sigmoid, single TANH and SIGMOID nodes in the lazy graph (small to build, with
// gradients 1 - t^2 and s (1 - s)), expanded into elementwise ops before scheduling, so the
// scheduler weighs and fuses them as the ops they run as.
//
// tanh(x) = sign(x) (1 - u) / (1 + u) with u = e^-2y, y = |x|, for y > ln2 / 2 (u < 1/2:
// nothing cancels); below, its odd Taylor series, whose terms shrink by (y / (pi/2))^2 < 0.049
// (6 terms for float32, 13 for float64). sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e)
// below, e = e^-|x| <= 1: neither overflows. e^v is EXP2(v * log2(e)), Tensor::exp's form,
// which the codegen computes from v itself.
#ifndef POLYGRAD_SCHEDULE_ACTIVATIONS_HPP
#define POLYGRAD_SCHEDULE_ACTIVATIONS_HPP

#include "ir/uop.hpp"

#include <vector>

namespace polygrad::schedule {

/// `roots` with every TANH and SIGMOID replaced by its elementwise ops.
std::vector<UOpRef> expand_activations(const std::vector<UOpRef>& roots);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_ACTIVATIONS_HPP
