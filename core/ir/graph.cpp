#include "ir/graph.hpp"

#include "ir/ptr_map.hpp"

namespace polygrad {

namespace {

/// Appends to `order` every node under `root` not yet in `seen`, sources before users.
void walk(const UOp* root, detail::PtrMap<char>& seen, std::vector<const UOp*>& order) {
  if (root == nullptr || seen.contains(root)) return;
  std::vector<std::pair<const UOp*, size_t>> stack{{root, 0}};
  seen.put(root, 1);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < n->nsrcs()) {
      const UOp* s = n->src(next++).get();
      if (!seen.contains(s)) {
        seen.put(s, 1);
        stack.emplace_back(s, 0);
      }
      continue;
    }
    order.push_back(n);
    stack.pop_back();
  }
}

}  // namespace

std::vector<const UOp*> toposort(const UOpRef& root) {
  std::vector<const UOp*> order;
  detail::PtrMap<char> seen;
  walk(root.get(), seen, order);
  return order;
}

std::vector<const UOp*> toposort(const std::vector<UOpRef>& roots) {
  std::vector<const UOp*> order;
  detail::PtrMap<char> seen;
  for (const UOpRef& r : roots) walk(r.get(), seen, order);
  return order;
}

UOpRef substitute(const UOpRef& root, const std::unordered_map<const UOp*, UOpRef>& replace) {
  detail::PtrMap<UOpRef> done;
  std::vector<UOpRef> srcs;
  for (const UOp* n : toposort(root)) {
    if (auto it = replace.find(n); it != replace.end()) {
      done.put(n, it->second);
      continue;
    }
    srcs.clear();
    for (const UOpRef& s : n->srcs()) srcs.push_back(*done.find(s.get()));
    done.put(n, n->with_srcs(srcs));
  }
  return *done.find(root.get());
}

std::string node_to_string(const UOp& u) {
  std::string s = std::string(op_name(u.op())) + " " + u.dtype().name();
  std::string a = arg_to_string(u.arg());
  return a.empty() ? s : s + " " + a;
}

std::string to_string(const UOpRef& root) {
  std::string out;
  detail::PtrMap<size_t> id;
  for (const UOp* n : toposort(root)) {
    size_t i = id.size();
    id.put(n, i);
    out += "%";
    out += std::to_string(i);
    out += " = ";
    out += op_name(n->op());
    out += " ";
    out += n->dtype().name();
    if (n->nsrcs()) {
      out += " (";
      for (size_t k = 0; k < n->nsrcs(); ++k) {
        out += k ? ", %" : "%";
        out += std::to_string(*id.find(n->src(k).get()));
      }
      out += ")";
    }
    std::string a = arg_to_string(n->arg());
    if (!a.empty()) out += " " + a;
    out += "\n";
  }
  return out;
}

bool ReachesNode::operator()(const UOp* n) {
  if (n == target_) return true;
  if (auto it = memo_.find(n); it != memo_.end()) return it->second;
  bool hit = false;
  for (const UOpRef& s : n->srcs()) hit = hit || (*this)(s.get());
  memo_.emplace(n, hit);
  return hit;
}

}  // namespace polygrad
