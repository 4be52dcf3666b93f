// Stashing a reduction's values in the output; see stash.hpp.
#include "codegen/stash.hpp"

#include <algorithm>
#include <unordered_map>

#include "codegen/affine.hpp"
#include "codegen/cpu_tuning.hpp"
#include "codegen/rebuild.hpp"
#include "ir/graph.hpp"

namespace polygrad::codegen {

namespace {

using Ids = std::vector<int64_t>;  // loop ids, sorted

/// (Below this cost a value is cheaper to compute again than to store and load.)
constexpr int kMinCost = cpu_tuning::kMinStashCost;

bool has(const Ids& ids, int64_t id) {
  return std::binary_search(ids.begin(), ids.end(), id);
}

/// The cost of the part of `v` that varies with loop `k`: one per op, a transcendental 8.
int cost_along(const UOpRef& v, int64_t k, LoopDeps& deps) {
  int cost = 0;
  for (const UOp* u : toposort(v)) {
    if (!has(deps.of(u), k)) continue;
    switch (u->op()) {
      case Op::EXP2:
      case Op::LOG2:
      case Op::SIN:
      case Op::SQRT:
      case Op::RECIP:
      case Op::FDIV:
        cost += kMinCost;
        break;
      default:
        cost += is_alu(u->op()) || u->op() == Op::CAST || u->op() == Op::BITCAST ? 1 : 0;
    }
  }
  return cost;
}

}  // namespace

Stashed stash_reduced_values(const UOpRef& sink) {
  Stashed out{sink, {}};
  if (sink->op() != Op::SINK) return out;
  const std::vector<const UOp*> order = toposort(sink);
  LoopDeps deps;
  Ids reduced;
  std::vector<int64_t> loaded;  // slots
  std::vector<const UOp*> reduces;
  for (const UOp* u : order) {
    if (u->op() == Op::REDUCE) {
      reduces.push_back(u);
      for (size_t i = 1; i < u->nsrcs(); ++i) reduced.push_back(u->src(i)->arg_int());
    }
    if (u->op() == Op::LOAD) loaded.push_back(u->src(0)->src(0)->arg_int());
  }
  std::sort(reduced.begin(), reduced.end());
  std::vector<const UOp*> outputs;  // output ranges by loop id (the linearizer's loop order)
  for (const UOp* u : order)
    if (u->op() == Op::RANGE && !has(reduced, u->arg_int())) outputs.push_back(u);
  if (outputs.empty() || reduces.empty()) return out;
  std::sort(outputs.begin(), outputs.end(),
            [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
  const UOp* j = outputs.back();  // the innermost loop: each store runs once per value of it

  std::vector<UOpRef> stores(sink->srcs().begin(), sink->srcs().end());
  for (UOpRef& st : stores) {
    if (st->op() != Op::STORE || st->nsrcs() != 2) continue;
    const UOpRef& index = st->src(0);
    const UOpRef& value = st->src(1);
    if (index->op() != Op::INDEX || index->nsrcs() != 2 ||
        index->src(0)->op() != Op::DEFINE_GLOBAL || value->dtype().is_vector())
      continue;
    const int64_t slot = index->src(0)->arg_int();
    const auto same_slot = [&](const UOpRef& o) {  // (any store whose buffer is not plain too)
      const UOp* at = o->op() == Op::STORE ? o->src(0).get() : nullptr;
      return at == nullptr || at->op() != Op::INDEX || at->src(0)->op() != Op::DEFINE_GLOBAL ||
             at->src(0)->arg_int() == slot;
    };
    if (has(loaded, slot) || std::count_if(stores.begin(), stores.end(), same_slot) != 1) continue;
    // Distinct columns j, distinct elements: the stash of one is not overwritten by another.
    const std::optional<int64_t> cj = coefficient(index->src(1).get(), j);
    if (!cj || *cj == 0) continue;
    const std::vector<const UOp*> in_value = toposort(value);
    for (const UOp* r : reduces) {
      if (r->nsrcs() != 2 || r->dtype() != value->dtype() || r->src(1)->src(0) != j->src(0) ||
          std::find(in_value.begin(), in_value.end(), r) == in_value.end())
        continue;
      const UOp* k = r->src(1).get();
      const UOpRef& e = r->src(0);
      const Ids& outside = deps.of(r);  // the loops the REDUCE runs inside
      // It runs once per value of every output loop but j: once per row of a softmax, just
      // before the row's loop over j.
      bool placed = !has(outside, j->arg_int());
      for (const UOp* o : outputs) placed = placed && (o == j || has(outside, o->arg_int()));
      if (!placed || cost_along(e, k->arg_int(), deps) < kMinCost) continue;
      const UOpRef at = simplify_indexing(substitute_range(index, j, k->ref()));
      bool inside = true;
      for (const UOp* u : toposort(at))
        if (u->op() == Op::RANGE && u != k) inside = inside && has(outside, u->arg_int());
      if (!inside) continue;
      const UOp* again = nullptr;  // e with j for k, in the stored value
      for (const UOp* n : in_value)
        if (n->op() == e->op() && n->dtype() == e->dtype() && has(deps.of(n), j->arg_int()) &&
            simplify_indexing(substitute_range(n->ref(), j, k->ref())) == e) {
          again = n;
          break;
        }
      if (again == nullptr) continue;
      const UOpRef reload = UOp::make(Op::LOAD, e->dtype(), {index});
      const UOpRef reduce = UOp::make(Op::REDUCE, r->dtype(),
                                      {UOp::make(Op::LOAD, e->dtype(), {at}), r->src(1)}, r->arg());
      const UOpRef stored = rebuild(value, [&](const UOpRef& n) {
        return n.get() == again ? reload : n.get() == r ? reduce : n;
      });
      st = UOp::make(Op::STORE, st->dtype(), {index, stored});
      out.stashes.push_back({reduce.get(), at, e});
      break;
    }
  }
  if (!out.stashes.empty()) out.sink = UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
  return out;
}

}  // namespace polygrad::codegen
