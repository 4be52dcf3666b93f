// The dot form of the output upcast (see optimize.hpp): choosing it and applying it.
#include <algorithm>
#include <optional>

#include "codegen/rebuild.hpp"
#include "codegen/upcast_parts.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"

#include <unordered_map>
#include <unordered_set>

namespace polygrad::codegen::upcast {

namespace {

/// The dot form's lanes for a float sum `red` over a last range k its loads are contiguous
/// along, without selects (their bool vectors stay scalar code); 0 when it does not qualify.
/// A k that the target's full width does not divide (300, 1023) takes full vectors over as
/// much of it as they divide and a scalar sum over the rest.
int64_t dot_lanes(const UOpRef& sink, const UOp* red, const Target& target) {
  if (red->nsrcs() < 2 || static_cast<Op>(red->arg_int()) != Op::ADD || !red->dtype().is_float() ||
      red->dtype().is_vector())
    return 0;
  const UOp* k = red->src(red->nsrcs() - 1).get();
  if (k->src(0)->op() != Op::CONST || has_selects(red->src(0))) return 0;
  const int64_t ek = k->src(0)->arg_int();
  const int64_t elem = red->dtype().scalar_size();
  int64_t w = lanes_dividing(target, elem, ek);
  if (const int64_t full = vector_lanes(target, elem); w < full && ek >= 2 * full) w = full;
  if (w < 2 || ek < 2 * w || !vectorizable(sink, k, w)) return 0;
  return w;
}

/// A vector REDUCE's lane sum, left to sum_lanes_together: a GEP of no lane, which nothing else
/// builds.
UOpRef pending_sum(const UOpRef& v) {
  return UOp::make(Op::GEP, v->dtype().scalar_type(), {v}, std::vector<int64_t>{-1});
}

/// Whether `u` is a lane sum pending_sum left.
bool is_pending(const UOp* u) {
  return u->op() == Op::GEP && u->arg_ints() == std::vector<int64_t>{-1};
}

/// `sink` with the lane sums pending_sum left worked out together (lane_sums), per vector
/// dtype, in the order the stores reach them (a row block's columns side by side). A sum whose
/// vector depends on another pending sum waits for a later round, after that one.
UOpRef sum_lanes_together(UOpRef sink) {
  for (;;) {
    std::vector<std::pair<DType, std::vector<const UOp*>>> groups;
    std::unordered_set<const UOp*> waits;  // nodes that depend on a pending sum
    for (const UOp* u : toposort(sink)) {
      bool depends = false;
      for (const UOpRef& src : u->srcs())
        depends = depends || is_pending(src.get()) || waits.count(src.get()) != 0;
      if (depends) waits.insert(u);
      if (!is_pending(u) || depends) continue;
      const DType t = u->src(0)->dtype();
      auto g =
          std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == t; });
      if (g == groups.end()) g = groups.insert(groups.end(), {t, {}});
      g->second.push_back(u);
    }
    if (groups.empty()) return sink;
    std::unordered_map<const UOp*, UOpRef> sums;
    for (const auto& [t, pending] : groups) {
      std::vector<UOpRef> vs;
      for (const UOp* p : pending) vs.push_back(p->src(0));
      const std::vector<UOpRef> s = lane_sums(vs);
      for (size_t i = 0; i < pending.size(); ++i) sums.emplace(pending[i], s[i]);
    }
    sink = substitute(sink, sums);
  }
}

}  // namespace

/// The dot form (see optimize.hpp) for a kernel whose REDUCEs are float sums over ranges their
/// loads are contiguous along (the innermost, when one reduces over several: a weight gradient
/// over (batch, positions)). Several REDUCEs over distinct ranges (an RNN step's
/// x @ wi.T + h @ wh.T) each take their own vector loop.
UpcastPlan choose_dot(const UOpRef& sink, const std::vector<const UOp*>& order,
                      const std::vector<const UOp*>& outputs, const Target& target) {
  std::vector<const UOp*> reds;
  for (const UOp* u : order)
    if (u->op() == Op::REDUCE) reds.push_back(u);
  if (reds.empty()) return {};
  // Several REDUCEs: each a product summed for each output column (an RNN step's two
  // matmuls). A layernorm's row statistics, free of the columns, stay as the linearizer
  // writes them (in the dot form its rows ran 0.55 -> 0.82 ms at 4097 x 769).
  if (reds.size() > 1) {
    const std::unordered_set<const UOp*> dep = dependents(order, outputs.back());
    for (const UOp* r : reds)
      if (!dep.count(r)) return {};
  }
  UpcastPlan plan;
  for (const UOp* r : reds) {
    const int64_t w = dot_lanes(sink, r, target);
    if (w == 0) return {};
    const UOp* k = r->src(r->nsrcs() - 1).get();
    for (const auto& [other, lanes] : plan.dot_ks)
      if (other == k) return {};  // (two REDUCEs over one range: not planned)
    plan.dot_ks.emplace_back(k, static_cast<int>(w));
  }
  const UOp* red = reds.front();
  plan.dot_k = plan.dot_ks.front().first;
  plan.lanes = plan.dot_ks.front().second;
  // A symbolic extent (0 here: the launch variable) takes any factor (see RangeSplit).
  auto extent = [](const UOp* r) {
    return r->src(0)->op() == Op::CONST ? r->src(0)->arg_int() : int64_t{0};
  };
  const UOp* j = outputs.back();
  const int64_t ej = extent(j);
  plan.j = j;
  plan.cols = ej % 4 == 0 ? 4 : ej % 2 == 0 ? 2 : 1;
  // i: the output range next to j (in a batched a @ b.T the batch range is further out and
  // shares no loads between its rows). R*C accumulators, R + C loads per step.
  // With 16 vector registers (AVX2), 4 x 4 accumulators and 8 loads spill inside the k loop:
  // 3 x 3 take 9 + 6, and ranges that 3 does not divide get a clamped, gated last block
  // (RangeSplit). The MLP's x @ w1.T: 553-609 -> 381-402 us.
  const bool few_registers = vector_registers(target) <= 16;
  if (few_registers) plan.cols = static_cast<int>(ej == 0 ? 3 : std::min<int64_t>(3, ej));
  if (outputs.size() >= 2) {
    const UOp* i = outputs[outputs.size() - 2];
    const int64_t ei = extent(i);
    if (few_registers) {
      plan.i = i;
      plan.rows = static_cast<int>(ei == 0 ? 3 : std::min<int64_t>(3, ei));
    } else {
      for (int r = std::min(8, 16 / plan.cols); r >= 2; r /= 2)
        if (ei % r == 0) {
          plan.i = i;
          plan.rows = r;
          break;
        }
    }
  }
  // A lone row reduction (the partial sums of a large sum): 8 rows in flight, as memory allows.
  if (plan.i == nullptr && ej % 8 == 0 && (ej >= 16 || ej == 0)) plan.cols = 8;
  // One row of a times b.T (x @ w.T, a decoding step's logits): the 8 rows of b a step reads
  // are one from each eighth of b, not 8 neighbours of 3 KB each: 8 long streams, as the sum's
  // partial rows are (one thread streams them at twice the rate of neighbouring short rows).
  if (plan.i == nullptr && plan.cols == 8 && reds.size() == 1)
    for (const UOp* u : order)
      if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
          u->src(0)->arg_int() != 0 && coefficient(u->src(1).get(), j) == 0)
        plan.strided_cols = true;
  // Over two reduce ranges (a weight gradient over (batch, positions)) with b, the columns'
  // operand, larger than half an L2: every row block would stream all of b. Sliced by the
  // outer range instead, column blocks outermost (the launch), then the slice, then the row
  // blocks: each column block's slice of b stays in L1 across the row blocks, and b is read
  // once. The weight gradient of a conv 64 -> 64 channels on 16 x 16, batch 32, on a Sapphire
  // Rapids host: 8.3 -> 5.3 ms. (Blocks of fewer than 4 columns re-read a per slice: left.)
  if (reds.size() == 1 && red->nsrcs() == 3 && plan.i != nullptr && ej > 0 && sink->nsrcs() == 1 &&
      affine_in_reduce(sink->src(0)->src(1))) {
    const int64_t elem = red->dtype().scalar_size();
    const int64_t units = std::max<int64_t>(1, target.caps.compute_units);
    // (a symbolic outer range, a batch, counts as large)
    const UOp* outer = red->src(1).get();
    const int64_t slices = outer->src(0)->op() == Op::CONST ? outer->src(0)->arg_int() : 1 << 20;
    bool large = false;  // an operand that walks the columns, larger than half an L2
    for (const UOp* u : order)
      if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL &&
          u->src(0)->arg_int() != 0) {
        const std::optional<int64_t> cj = coefficient(u->src(1).get(), j);
        large =
            large || (cj && *cj > 0 && ej * *cj * elem * slices > CacheBudget(target).whole_b());
      }
    if (large && plan.cols >= 4 && ej / plan.cols >= 2 * units) {
      plan.k_outer = red->src(1).get();
      // Several values of the outer range per slice, as many as keep the row and column
      // blocks' slices within half an L1 (up to 8): each slice ends in R * C lane sums and a
      // read-modify-write of the outputs.
      const int64_t inner = red->src(2)->src(0)->arg_int();
      const int64_t per = (plan.rows + plan.cols) * inner * elem;
      for (int64_t g = kMaxGroup; g >= 2 && plan.k_group == 1; --g)
        if (g * per <= CacheBudget(target).slice() && g < slices)
          plan.k_group = static_cast<int>(g);
      // Column blocks in groups of CB per launch step, looped inside the row blocks: each row
      // block's slice of a serves CB column blocks from L1, so a (all of it per launch step)
      // is read 1/CB as often; their slices of b stay in L2 (a quarter of it). The weight
      // gradient of a conv 64 -> 64 channels on 16 x 16, batch 32, on one core of a Sapphire
      // Rapids host: 9.2 ms sliced per batch element, 8.4 in slices of 3, 5.6-5.9 with column
      // blocks in groups of 8 as well.
      const int64_t blocks = ceil_div(ej, plan.cols);
      const int64_t b_slice = plan.cols * plan.k_group * inner * elem;
      for (int64_t cb = kMaxColBlocks; cb >= 2 && plan.col_blocks == 1; cb /= 2)
        if (blocks % cb == 0 && blocks / cb >= 2 * units &&
            cb * b_slice <= CacheBudget(target).col_blocks())
          plan.col_blocks = static_cast<int>(cb);
    }
  }
  return plan;
}
/// `sink` rewritten by a dot-form plan.
UOpRef apply_dot(const UOpRef& sink, const UpcastPlan& plan) {
  const int64_t top = top_range_id(sink);
  // Sliced by an outer reduce range: loops j' (launch) > k0 (that range) > i' > k.
  int64_t id_j = plan.j->arg_int(), id_i = plan.i != nullptr ? plan.i->arg_int() : 0;
  // k_group G > 1: k0 runs over ceil(n / G) slices and g over the G values of each (fewer in
  // the last), k_outer = k0 * G + g.
  UOpRef k0, g, outer_value;
  if (plan.k_outer != nullptr) {
    id_j = top + 1;
    id_i = top + 3;
    const UOpRef& n = plan.k_outer->src(0);
    const int64_t G = plan.k_group;
    if (G == 1) {
      k0 = range(n, top + 2);
      outer_value = k0;
    } else {
      const Slices sl(n, G, top + 2);
      k0 = sl.slice;
      g = range(sl.length, top + 4 + static_cast<int64_t>(plan.dot_ks.size()));
      outer_value = k0 * G + g;
    }
  }
  // Column blocks in groups (k_outer slicing): j' (launch) > k0 > i' > jc.
  const RangeSplit js(plan.j, plan.cols, id_j, plan.col_blocks, top + kGroupLoopId,
                      plan.strided_cols);
  const RangeSplit is = plan.i != nullptr ? RangeSplit(plan.i, plan.rows, id_i) : RangeSplit();
  // Each REDUCE over one of the plan's ranges k: k -> k' * W + lane, and when W does not
  // divide k, a scalar loop over the last k % W terms after the vector one.
  auto vectorize_reduce = [&](const UOpRef& n) -> UOpRef {
    if (n->op() != Op::REDUCE || n->nsrcs() < 2) return n;
    const UOp* k = n->src(n->nsrcs() - 1).get();
    size_t at = 0;
    while (at < plan.dot_ks.size() && plan.dot_ks[at].first != k) ++at;
    if (at == plan.dot_ks.size()) return n;
    const int lanes = plan.dot_ks[at].second;
    const int64_t ek = k->src(0)->arg_int(), rest = ek % lanes;
    const UOpRef kv = range(const_int(dtypes::index, ek / lanes), k->arg_int());
    Vectorizer vec(k, kv * lanes, lanes);
    UOpRef v = vec.run(n->src(0));
    const DType vt = n->dtype().vec(lanes);
    if (v->dtype() != vt) v = UOp::make(Op::VECTORIZE, vt, std::vector<UOpRef>(lanes, v));
    std::vector<UOpRef> srcs{v};  // the other reduce ranges stay loops around k
    for (size_t i = 1; i + 1 < n->nsrcs(); ++i)
      if (n->src(i).get() != plan.k_outer)
        srcs.push_back(n->src(i));
      else if (g)
        srcs.push_back(g);
    srcs.push_back(kv);
    // (Its lanes are summed below, with the other stores' sums.)
    UOpRef sum = pending_sum(UOp::make(Op::REDUCE, vt, srcs, n->arg()));
    if (rest == 0) return sum;
    const UOpRef kr = range(const_int(dtypes::index, rest), top + 4 + static_cast<int64_t>(at));
    srcs[0] = substitute_range(n->src(0), k, kr + (ek - rest));
    srcs.back() = kr;
    return sum + UOp::make(Op::REDUCE, n->dtype(), srcs, n->arg());
  };
  auto sliced = [&](const UOpRef& st) -> UOpRef {
    if (!k0) return rebuild(st, vectorize_reduce);
    const std::optional<AffineInReduce> f = affine_in_reduce(st->src(1));
    if (!f) ir_error("codegen: dot-form slicing lost the a + b * sum form of a store");
    const UOpRef part = rebuild(f->reduce->ref(), vectorize_reduce);
    return slice_store(st, *f, substitute_range(part, plan.k_outer, outer_value), k0);
  };
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs())
    for (int r = 0; r < plan.rows; ++r) {
      const UOpRef row = is.copy(st, r);
      for (int c = 0; c < plan.cols; ++c)
        stores.push_back(gated_store(sliced(js.copy(row, c)), both(is.gate(r), js.gate(c))));
    }
  return sum_lanes_together(UOp::make(Op::SINK, sink->dtype(), stores, sink->arg()));
}

}  // namespace polygrad::codegen::upcast
