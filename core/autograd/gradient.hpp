// Reverse-mode autograd as a rewrite of the tensor-level graph: the gradient of a node is
// another lazy tensor-level graph, built from the same ops as the forward graph.
#ifndef POLYGRAD_AUTOGRAD_GRADIENT_HPP
#define POLYGRAD_AUTOGRAD_GRADIENT_HPP

#include "ir/uop.hpp"

#include <vector>

namespace polygrad::autograd {

/// Gradients of `root` w.r.t. each of `targets`, given root's incoming gradient `root_grad`
/// (same shape and dtype as root). Results are lazy tensor-level graphs with each target's
/// shape; a null UOpRef when root does not depend on a target. Gradients are ordinary graphs,
/// so gradient() of a gradient works (second order).
///
/// Only float nodes carry gradients: a root or a target that is not float, or a root_grad whose
/// dtype or shape differs from root's, is a user error (polygrad::Error) naming the op. An op
/// with no rule (kernel-level ops, SINK) is an internal error naming it.
std::vector<UOpRef> gradient(const UOpRef& root, const UOpRef& root_grad,
                             const std::vector<UOpRef>& targets);

}  // namespace polygrad::autograd

#endif  // POLYGRAD_AUTOGRAD_GRADIENT_HPP
