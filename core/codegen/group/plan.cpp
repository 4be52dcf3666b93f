// plan_groups(): the flat and row forms of the group strategy (plan.hpp).
#include "codegen/group/plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <limits>
#include <optional>
#include "codegen/group/ast_parts.hpp"
#include "codegen/group/tiles.hpp"
#include "codegen/group/tuning.hpp"
#include "codegen/group/wmma.hpp"
#include "codegen/rebuild.hpp"
#include "codegen/upcast_parts.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "symbolic/bounds.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen {

namespace {

using namespace group_ast;  // NOLINT: the shared builders

bool stores_depend_on(const UOpRef& sink, LoopDeps& deps, const UOp* r) {
  for (const UOpRef& st : sink->srcs()) {
    const std::vector<int64_t>& ids = deps.of(st->src(0).get());
    if (!std::binary_search(ids.begin(), ids.end(), r->arg_int())) return false;
  }
  return true;
}

/// An elementwise kernel whose loads and stores are contiguous along its innermost launched
/// range j, at offsets that stay multiples of the vector's lanes: j -> jn * W + lane, each
/// thread a W-lane vector (one 16-byte access per operand on a GPU). `launch` gets jn for j,
/// and `keep` holds jn (the simplified stores need not). Unchanged otherwise.
UOpRef vectorize_flat(const UOpRef& sink, Ranges& launch, UOpRef& keep, const Target& target,
                      int64_t id) {
  if (launch.empty()) return sink;
  const UOp* j = launch.back();
  const int64_t elem = sink->src(0)->src(1)->dtype().scalar_size();
  if (elem <= 0 || j->src(0)->op() != Op::CONST) return sink;
  const int64_t w = upcast::lanes_dividing(target, elem, j->src(0)->arg_int());
  if (w < 2 || !upcast::vectorizable(sink, j, w, true)) return sink;
  const UOpRef jn = range(idx(j->src(0)->arg_int() / w), id);
  if (target.caps.flags & PG_CAP_ALIGNED_VECTORS)
    for (const UOp* u : toposort(sink))
      if (u->op() == Op::INDEX) {
        const UOpRef first = simplify(substitute_range(u->src(1), j, jn * w) % w);
        if (!(first->op() == Op::CONST && first->arg_int() == 0)) return sink;
      }
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs()) {
    upcast::Vectorizer vec(j, jn * w, static_cast<int>(w));
    stores.push_back(vec.run(st));
  }
  launch.back() = jn.get();
  keep = jn;
  return UOp::make(Op::SINK, dtypes::void_, stores);
}

/// The flat form: the output ranges in `launch` are one thread each.
Planned flat(const UOpRef& sink, const Target& target, const Ranges& launch) {
  Planned plan;
  plan.grouped = true;
  const UOpRef total = extent_of(launch);
  int64_t threads = std::min<int64_t>(group_tuning::kFlatThreads, max_local(target));
  const int64_t n = constant_or(total);
  const int64_t warp = std::max<uint32_t>(1, target.caps.subgroup_size);
  if (n >= 0 && n < threads)
    threads = std::min(threads, std::max<int64_t>(1, (n + warp - 1) / warp * warp));
  const UOpRef groups = simplify((total + (threads - 1)) / threads);
  const UOpRef f = special("gidx0", groups) * threads + special("lidx0", idx(threads));
  const Shared s = share(f, total, threads, n >= 0 && n % threads == 0);
  std::unordered_map<const UOp*, UOpRef> to;
  unflatten(launch, s.at, to);
  plan.sink = rewrite(sink, [&](const UOp* orig, const UOpRef& n) -> UOpRef {
    if (auto it = to.find(orig); it != to.end()) return it->second;
    if (n->op() == Op::STORE) return gate_store(n, s.inside);
    return n;
  });
  plan.groups = {groups, idx(1), idx(1)};
  plan.local = {static_cast<uint32_t>(threads), 1, 1};
  return plan;
}

/// The row form: the ranges in `rows` are the group; the other outputs and every REDUCE in
/// `shared` are shared out over the group's threads.
Planned by_rows(const UOpRef& sink, Kernel& k, const Ranges& rows,
                const std::vector<const UOp*>& shared, int64_t threads) {
  Planned plan;
  plan.grouped = true;
  const UOpRef groups = extent_of(rows);
  const UOpRef lidx = special("lidx0", idx(threads));
  std::unordered_map<const UOp*, UOpRef> to;
  unflatten(rows, special("gidx0", groups), to);
  Ranges rest;
  for (const UOp* r : k.outputs)
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) rest.push_back(r);
  UOpRef store_gate;
  if (rest.empty()) {
    store_gate = eq(lidx, idx(0));  // one value per row: thread 0 stores it
  } else {
    const UOpRef total = extent_of(rest);
    const int64_t n = constant_or(total);
    const UOpRef step = range(simplify((total + (threads - 1)) / threads), k.next_id++);
    const Shared s = share(step * threads + lidx, total, threads, n >= 0 && n % threads == 0);
    unflatten(rest, s.at, to);
    store_gate = s.inside;
  }
  plan.sink = rewrite(sink, [&](const UOp* orig, const UOpRef& n) -> UOpRef {
    if (auto it = to.find(orig); it != to.end()) return it->second;
    if (n->op() == Op::STORE) return gate_store(n, store_gate);
    if (n->op() != Op::REDUCE || std::find(shared.begin(), shared.end(), orig) == shared.end())
      return n;
    // Thread l takes the reduce's values l, l + L, ...; the tree joins the threads' partials.
    Ranges ks;
    for (size_t i = 1; i < n->nsrcs(); ++i) ks.push_back(n->src(i).get());
    const UOpRef total = extent_of(ks);
    const int64_t e = constant_or(total);
    const UOpRef step = range(simplify((total + (threads - 1)) / threads), k.next_id++);
    const Shared s = share(step * threads + lidx, total, threads, e >= 0 && e % threads == 0);
    std::unordered_map<const UOp*, UOpRef> at;
    unflatten(ks, s.at, at);
    UOpRef v = n->src(0);
    for (const auto& [r, with] : at) v = substitute_range(v, r, with);
    if (s.inside)
      v = where(s.inside, v, reduce_identity(static_cast<Op>(n->arg_int()), n->dtype()));
    return UOp::make(Op::REDUCE, n->dtype(), {v, step, lidx}, n->arg());
  });
  plan.groups = {groups, idx(1), idx(1)};
  plan.local = {static_cast<uint32_t>(threads), 1, 1};
  return plan;
}

}  // namespace

Planned plan_groups(const UOpRef& sink, const Target& target, bool scatter) {
  if (!scatter) {
    if (std::optional<Planned> mma = plan_wmma(sink, target)) return std::move(*mma);
    if (std::optional<Planned> tiled = plan_tiles(sink, target)) return std::move(*tiled);
  }
  Kernel k = survey(sink);
  LoopDeps deps;
  Planned plan;
  plan.grouped = true;
  for (const UOp* r : k.outputs) plan.out_ends.push_back(r->src(0));
  // Rows: the output ranges the reduces depend on. A reduce is shared by the group when it
  // depends on no other reduce's range (one nested in another's loop differs per thread).
  Ranges rows;
  std::vector<const UOp*> shared;
  int64_t longest = 0;
  for (const UOp* r : k.reduces) {
    const std::vector<int64_t>& ids = deps.of(r);
    bool nested = false;
    for (int64_t id : ids) nested = nested || k.reduced_ids.count(id) > 0;
    if (nested) continue;
    shared.push_back(r);
    Ranges ks;
    for (size_t i = 1; i < r->nsrcs(); ++i) ks.push_back(r->src(i).get());
    const int64_t e = constant_or(extent_of(ks));
    longest = std::max(longest, e < 0 ? std::numeric_limits<int64_t>::max() : e);
  }
  for (const UOp* o : k.outputs)
    for (const UOp* r : k.reduces) {
      const std::vector<int64_t>& ids = deps.of(r);
      if (std::binary_search(ids.begin(), ids.end(), o->arg_int())) {
        rows.push_back(o);
        break;
      }
    }
  const std::optional<Bounds> row_count = bounds(extent_of(rows));
  if (!scatter && !shared.empty() && longest >= group_tuning::kRowMinExtent && row_count &&
      row_count->hi <= int64_t{target.caps.max_global_dims[0]}) {
    int64_t threads = std::min<int64_t>(
        {group_tuning::row_threads(), int64_t{max_local(target)}, pow2_floor(longest)});
    threads = pow2_floor(threads);
    int64_t bytes = 0;
    for (const UOp* r : shared) bytes += r->dtype().scalar_size();
    while (threads > 1 && bytes * threads > static_cast<int64_t>(target.caps.local_memory_bytes))
      threads /= 2;
    if (threads > 1) {
      Planned p = by_rows(sink, k, rows, shared, threads);
      p.out_ends = std::move(plan.out_ends);
      return p;
    }
  }
  // Flat: every output range all the stores depend on is launched (a scatter's outermost
  // only: its steps own their addresses); the rest stay loops inside the thread.
  Ranges launch;
  for (const UOp* o : k.outputs) {
    if (!stores_depend_on(sink, deps, o)) break;
    launch.push_back(o);
    if (scatter) break;
  }
  UOpRef jn;
  const UOpRef vsink =
      k.reduces.empty() && !scatter ? vectorize_flat(sink, launch, jn, target, k.next_id++) : sink;
  Planned p = flat(vsink, target, launch);
  p.out_ends = std::move(plan.out_ends);
  return p;
}

}  // namespace polygrad::codegen
