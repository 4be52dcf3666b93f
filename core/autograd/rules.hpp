// The per-op gradient rules of autograd (internal to core/autograd).
#ifndef POLYGRAD_AUTOGRAD_RULES_HPP
#define POLYGRAD_AUTOGRAD_RULES_HPP

#include "tensor/lazy.hpp"

#include <vector>

namespace polygrad::autograd::detail {

/// The gradients of a node's tensor sources (one entry per source; movement ops have one
/// tensor source, the rest of their sources are sizes) given the gradient `g` of the node's
/// output. A null entry: no gradient flows to that source.
using SourceGrads = std::vector<UOpRef>;
using GradRule = SourceGrads (*)(const UOp* node, const UOpRef& g, lazy::ShapeOf& shape);

/// The rule for `op`, or nullptr when the op has none (kernel-level ops, SINK).
GradRule grad_rule(Op op);

/// Number of sources of `node` that are tensors (1 for movement ops, all of them otherwise).
size_t tensor_src_count(const UOp* node);

}  // namespace polygrad::autograd::detail

#endif  // POLYGRAD_AUTOGRAD_RULES_HPP
