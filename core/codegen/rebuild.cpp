#include "codegen/rebuild.hpp"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "rewrite/graph_rewrite.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

bool has_selects(const UOpRef& v) {
  for (const UOp* u : toposort(v))
    if (u->op() == Op::WHERE || is_compare(u->op()) || u->op() == Op::TRUNC ||
        u->op() == Op::BITCAST)
      return true;
  return false;
}

UOpRef rebuild(const UOpRef& root, const std::function<UOpRef(const UOpRef&)>& fn) {
  std::unordered_map<const UOp*, UOpRef> done;
  std::vector<UOpRef> srcs;
  for (const UOp* n : toposort(root)) {
    srcs.clear();
    for (const UOpRef& s : n->srcs()) srcs.push_back(done.at(s.get()));
    UOpRef out = fn(n->with_srcs(srcs));
    if (!out) ir_error("codegen: internal error: a pass dropped " + node_to_string(*n));
    done.emplace(n, std::move(out));
  }
  return done.at(root.get());
}

namespace {

UOpRef substitute_in(const UOpRef& n, const UOp* range, const UOpRef& with,
                     std::unordered_map<const UOp*, UOpRef>& done) {
  if (n.get() == range) return with;
  if (auto it = done.find(n.get()); it != done.end()) return it->second;
  UOpRef out = n;
  bool rebinds = false;
  if (n->op() == Op::REDUCE)
    for (size_t i = 1; i < n->nsrcs(); ++i) rebinds = rebinds || n->src(i).get() == range;
  if (!rebinds) {
    std::vector<UOpRef> srcs;
    for (const UOpRef& s : n->srcs()) srcs.push_back(substitute_in(s, range, with, done));
    out = n->with_srcs(srcs);
  }
  done.emplace(n.get(), out);
  return out;
}

}  // namespace

const std::vector<int64_t>& LoopDeps::of(const UOp* n) {
  if (auto it = memo_.find(n); it != memo_.end()) return it->second;
  auto merge = [](std::vector<int64_t>& ids, const std::vector<int64_t>& d) {
    std::vector<int64_t> merged;
    std::set_union(ids.begin(), ids.end(), d.begin(), d.end(), std::back_inserter(merged));
    ids.swap(merged);
  };
  std::vector<int64_t> ids;
  for (const UOpRef& s : n->srcs()) merge(ids, of(s.get()));
  if (n->op() == Op::RANGE) {
    auto at = std::lower_bound(ids.begin(), ids.end(), n->arg_int());
    if (at == ids.end() || *at != n->arg_int()) ids.insert(at, n->arg_int());
  }
  if (auto it = forced_.empty() ? forced_.end() : forced_.find(n); it != forced_.end())
    for (int64_t id : it->second) {
      auto at = std::lower_bound(ids.begin(), ids.end(), id);
      if (at == ids.end() || *at != id) ids.insert(at, id);
    }
  if (n->op() == Op::REDUCE) {
    // The reduced ids go; the ids of their ends stay (deps of the end were merged above, but
    // the RANGE added its own id: take those out again and re-add the ends' ids).
    for (size_t i = 1; i < n->nsrcs(); ++i) {
      if (n->src(i)->op() != Op::RANGE) continue;  // a group reduce's thread index
      auto at = std::lower_bound(ids.begin(), ids.end(), n->src(i)->arg_int());
      if (at != ids.end() && *at == n->src(i)->arg_int()) ids.erase(at);
    }
    for (size_t i = 1; i < n->nsrcs(); ++i)
      if (n->src(i)->op() == Op::RANGE) merge(ids, of(n->src(i)->src(0).get()));
  }
  return memo_.emplace(n, std::move(ids)).first->second;
}

UOpRef reduce_identity(Op op, DType t) {
  switch (op) {
    case Op::ADD:
      return t.is_float() ? const_float(t, 0.0) : const_int(t, 0);
    case Op::MUL:
      return t.is_float() ? const_float(t, 1.0) : const_int(t, 1);
    default:  // MAX
      return t.is_float() ? const_float(t, t.min_value()) : const_int(t, t.int_min());
  }
}

UOpRef substitute_range(const UOpRef& root, const UOp* range, const UOpRef& with) {
  std::unordered_map<const UOp*, UOpRef> done;
  return substitute_in(root, range, with, done);
}

UOpRef simplify_indexing(const UOpRef& root) {
  // One rewriter for every expression: a kernel's indices share most of their terms.
  GraphRewriter simplifier(symbolic_rules());
  return rebuild(root, [&](const UOpRef& n) {
    auto with = [&](size_t i) {
      std::vector<UOpRef> srcs(n->srcs().begin(), n->srcs().end());
      srcs[i] = simplifier.rewrite(srcs[i]);
      return n->with_srcs(srcs);
    };
    switch (n->op()) {
      case Op::INDEX:
        return with(1);
      case Op::RANGE:
        return with(0);
      case Op::LOAD:
        return n->nsrcs() == 3 ? with(2) : n;
      case Op::STORE:
        return n->nsrcs() == 3 ? with(2) : n;
      default:
        return n;
    }
  });
}

}  // namespace polygrad::codegen
