// Reverse-mode driver: walk the graph from root back to the targets, apply each node's rule,
// accumulate source gradients with ADD.
#include "autograd/gradient.hpp"

#include "autograd/rules.hpp"
#include "ir/graph.hpp"

#include <polygrad/error.hpp>

#include <unordered_map>
#include <unordered_set>

namespace polygrad::autograd {

namespace {

std::string describe(const UOp* u) {
  return std::string(op_name(u->op())) + " of dtype " + u->dtype().name();
}

/// Nodes of `order` (a toposort) that reach a target through float tensor sources; only they
/// get gradient work.
std::unordered_set<const UOp*> on_path(const std::vector<const UOp*>& order,
                                       const std::unordered_set<const UOp*>& targets) {
  std::unordered_set<const UOp*> path;
  for (const UOp* u : order) {
    if (!u->dtype().is_float()) continue;
    bool reaches = targets.count(u) != 0;
    for (size_t i = 0; i < detail::tensor_src_count(u) && !reaches; ++i)
      reaches = path.count(u->src(i).get()) != 0;
    if (reaches) path.insert(u);
  }
  return path;
}

}  // namespace

std::vector<UOpRef> gradient(const UOpRef& root, const UOpRef& root_grad,
                             const std::vector<UOpRef>& targets) {
  if (!root || !root_grad) user_error("gradient: null root or root gradient");
  if (!root->dtype().is_float())
    user_error("gradient: the root is " + describe(root.get()) +
               "; only float tensors have gradients");
  lazy::ShapeOf shape;
  if (root_grad->dtype() != root->dtype() || shape(root_grad) != shape(root))
    user_error("gradient: the root gradient is " + root_grad->dtype().name() + " " +
               lazy::shape_str(shape(root_grad)) + " but the root (" +
               std::string(op_name(root->op())) + ") is " + root->dtype().name() + " " +
               lazy::shape_str(shape(root)));
  std::unordered_set<const UOp*> wanted;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!targets[i]) user_error("gradient: target " + std::to_string(i) + " is null");
    if (!targets[i]->dtype().is_float())
      user_error("gradient: target " + std::to_string(i) + " is " + describe(targets[i].get()) +
                 "; only float tensors have gradients");
    wanted.insert(targets[i].get());
  }

  std::vector<const UOp*> order = toposort(root);
  std::unordered_set<const UOp*> path = on_path(order, wanted);
  std::unordered_map<const UOp*, UOpRef> grads;
  if (path.count(root.get())) grads[root.get()] = root_grad;

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp* u = *it;
    auto g = grads.find(u);
    if (g == grads.end()) continue;
    bool feeds_path = false;
    for (size_t i = 0; i < detail::tensor_src_count(u); ++i)
      feeds_path = feeds_path || path.count(u->src(i).get()) != 0;
    if (!feeds_path) continue;  // a target whose sources lead to no other target
    detail::GradRule rule = detail::grad_rule(u->op());
    if (!rule) internal_error("gradient: no rule for " + describe(u));
    detail::SourceGrads src_grads = rule(u, g->second, shape);
    for (size_t i = 0; i < src_grads.size(); ++i) {
      const UOp* s = u->src(i).get();
      if (!src_grads[i] || !path.count(s)) continue;
      UOpRef& acc = grads[s];
      acc = acc ? lazy::elementwise(Op::ADD, {acc, src_grads[i]}) : src_grads[i];
    }
  }

  std::vector<UOpRef> out;
  out.reserve(targets.size());
  for (const UOpRef& t : targets) {
    auto g = grads.find(t.get());
    out.push_back(g == grads.end() ? UOpRef() : g->second);
  }
  return out;
}

}  // namespace polygrad::autograd
