// The linearizer's REDUCEs: accumulators, their loops (lanes, blocked sums, shared loops,
// stashes, stages) and, on group targets, the tree that joins the threads' partials. The
// algorithm is described in linearize.hpp.
#include <algorithm>
#include <cstdlib>

#include "codegen/linearizer.hpp"
#include "codegen/upcast_parts.hpp"
#include "symbolic/simplify.hpp"

namespace polygrad::codegen::detail {

int Linearizer::reduce_lanes(DType t, const UOpRef& end) const {
  if (grouped_) return 1;  // a thread's values are L apart: no SIMD lanes to fill
  if (t.is_bool() || t.is_vector() || t.scalar_size() == 0) return 1;
  uint32_t lanes = target_.caps.vector_width_bytes / static_cast<uint32_t>(t.scalar_size());
  lanes = std::min(lanes, target_.caps.max_vector_lanes);
  if (lanes < 2) return 1;
  if (end->op() == Op::CONST && end->arg_int() < 2 * static_cast<int64_t>(lanes)) return 1;
  return static_cast<int>(lanes);
}

void Linearizer::accumulate(int s, Op op, DType t, uint32_t acc, const UOpRef& at,
                            const UOpRef& v) {
  const DType reg = t.scalar_type().ptr(AddrSpace::reg);
  keep_.push_back(at);
  // A vector sum of products (the upcast matmul) accumulates with MULACC: one fused
  // multiply-add per vector instead of a multiply and an add. On a target with groups (a GPU)
  // every float sum of products does, as its BLAS does: there a multiply and an add are two
  // instructions of the same cost as the fused one (the CPU's scalar sums stay as they were).
  const bool groups = (target_.caps.flags & PG_CAP_GROUPS) != 0;
  const bool fuse =
      op == Op::ADD && (t.is_vector() || groups) && t.is_float() && v->op() == Op::MUL;
  // A sum of tensor-core products WMMA(A, B, 0) accumulates through the C operand.
  if (op == Op::ADD && v->op() == Op::WMMA && is_zero_const(v->src(2).get())) {
    const uint32_t a = value(v->src(0), s), b = value(v->src(1), s);
    uint32_t idx = add(s, PG_OP_INDEX, reg, {acc, value(at, s)});
    uint32_t cur = add(s, PG_OP_LOAD, t, {idx});
    add(s, PG_OP_STORE, dtypes::void_,
        {idx, add(s, PG_OP_WMMA, t, {a, b, cur}, arg_i(v->arg_int()))});
    return;
  }
  std::vector<uint32_t> srcs;
  if (fuse)
    srcs = {value(v->src(0), s), value(v->src(1), s)};
  else
    srcs = {value(v, s)};
  uint32_t idx = add(s, PG_OP_INDEX, reg, {acc, value(at, s)});
  uint32_t cur = add(s, PG_OP_LOAD, t, {idx});
  uint32_t next = fuse ? add(s, PG_OP_MULACC, t, {srcs[0], srcs[1], cur})
                       : add(s, to_pg(op), t, {cur, srcs[0]});
  add(s, PG_OP_STORE, dtypes::void_, {idx, next});
}

bool Linearizer::reaches(const UOp* from, const UOp* to) {
  if (from == to) return true;
  auto key = std::make_pair(from, to);
  if (auto it = reach_.find(key); it != reach_.end()) return it->second;
  bool r = false;
  for (const UOpRef& s : from->srcs()) r = r || reaches(s.get(), to);
  reach_.emplace(key, r);
  return r;
}

std::vector<const UOp*> Linearizer::reduce_group(const UOp* r, int p) {
  std::vector<const UOp*> group{r};
  for (const UOp* s : reduces_) {
    if (s == r || s->dtype() != r->dtype() || s->nsrcs() != r->nsrcs()) continue;
    bool same_ranges = true;
    for (size_t i = 1; i < r->nsrcs(); ++i) same_ranges = same_ranges && s->src(i) == r->src(i);
    if (!same_ranges || memo_.count({s, p}) || try_place(s, p) != p) continue;
    bool independent = true;
    for (const UOp* g : group) independent = independent && !reaches(s, g) && !reaches(g, s);
    if (independent) group.push_back(s);
  }
  return group;
}

namespace {

/// Sums of at least this many values per accumulator are summed in blocks (Linearizer::reduce).
constexpr int64_t kBlockedSum = 128;
/// The blocks of a sum over one symbolic range.
constexpr int64_t kSymbolicBlock = 64;

}  // namespace

Linearizer::BlockedSum Linearizer::blocked_sum(const std::vector<const UOp*>& group, size_t full,
                                               int lanes) const {
  const UOp* r = group.front();
  if (!r->dtype().is_float()) return {};
  // (its ranges: sources 1 .. n, without a group reduce's trailing thread index)
  const size_t n = r->nsrcs() - (r->src(r->nsrcs() - 1)->op() == Op::SPECIAL ? 1 : 0);
  for (const UOp* g : group)
    if (static_cast<Op>(g->arg_int()) != Op::ADD ||
        (r->dtype().is_vector() && g->src(0)->op() == Op::MUL))
      return {};
  if (full == 0) {
    // One range split in lanes: its steps (end / lanes) in blocks of about their square root.
    const UOpRef& end = r->src(1)->src(0);
    if (lanes == 1 || n != 2 || end->op() != Op::CONST) return {};
    const int64_t steps = end->arg_int() / lanes;
    if (steps < kBlockedSum) return {};
    int64_t b = 16;
    while ((b + 1) * (b + 1) <= steps) ++b;
    return {true, b};
  }
  // One symbolic range (a batch): blocks of kSymbolicBlock and a rest.
  const UOpRef& first = r->src(1)->src(0);
  if (n == 2 && lanes == 1 && first->op() != Op::CONST) return {true, kSymbolicBlock};
  int64_t values = 1;
  for (size_t i = 1; i < n; ++i) {
    const UOpRef& end = r->src(i)->src(0);
    if (end->op() != Op::CONST) return {};
    values *= end->arg_int();
  }
  if (values / lanes < kBlockedSum) return {};
  if (n > 2 || lanes > 1) return {true, 0};  // blocks of the outermost range
  // One range: split in blocks of the divisor nearest its square root, at least 16.
  const int64_t k = first->arg_int();
  int64_t best = 0;
  for (int64_t b = 16; b * b <= 4 * k && b <= k / 2; ++b)
    if (k % b == 0 && (best == 0 || std::llabs(b * b - k) < std::llabs(best * best - k))) best = b;
  if (best == 0) return {};
  return {true, best};
}

void Linearizer::materialize(int p, const Stash& stash) {
  const UOp* k = stash.reduce->src(1).get();
  const int64_t id = next_id_++;
  // On a target whose scalar loops nothing vectorises (PG_CAP_EXPLICIT_SIMD), the loop runs in
  // vectors of the target's width where they divide a constant extent and the store is
  // contiguous along k (softmax's exponentials on wasm, as its read-back and sum run).
  if ((target_.caps.flags & PG_CAP_EXPLICIT_SIMD) != 0 && k->src(0)->op() == Op::CONST) {
    const int64_t extent = k->src(0)->arg_int();
    const int64_t lanes = upcast::lanes_dividing(target_, stash.value->dtype().itemsize(), extent);
    const UOpRef store = UOp::make(Op::STORE, dtypes::void_, {stash.index, stash.value});
    if (lanes > 1 && !stash.value->dtype().is_vector() &&
        upcast::vectorizable(UOp::make(Op::SINK, dtypes::void_, {store}), k, lanes, true, true)) {
      const UOpRef k0 = range(const_int(dtypes::index, extent / lanes), id);
      const UOpRef vstore =
          simplify_indexing(upcast::Vectorizer(k, k0 * lanes, static_cast<int>(lanes)).run(store));
      keep_.push_back(vstore);
      const int s = open_loop(p, id, k0->src(0));
      add(s, PG_OP_STORE, dtypes::void_, {value(vstore->src(0), s), value(vstore->src(1), s)});
      scopes_[s].open = false;
      return;
    }
  }
  const UOpRef kv = range(k->src(0), id);
  const UOpRef at = simplify_indexing(substitute_range(stash.index, k, kv));
  const UOpRef v = simplify_indexing(substitute_range(stash.value, k, kv));
  keep_.push_back(at);
  keep_.push_back(v);
  const int s = open_loop(p, id, k->src(0));
  add(s, PG_OP_STORE, dtypes::void_, {value(at, s), value(v, s)});
  scopes_[s].open = false;
}

uint32_t Linearizer::reduce(const UOp* r, int p) {
  has_reduce_ = true;
  // Every REDUCE over the same RANGEs that is placed here too shares the loops (matmul's
  // upcast rows and vectors: one k loop with many independent accumulators).
  const std::vector<const UOp*> group = reduce_group(r, p);
  const size_t n = group.size();
  const DType t = r->dtype();
  const DType reg = t.scalar_type().ptr(AddrSpace::reg);
  // A trailing SPECIAL (the group strategy's thread index): the group's threads each reduce
  // their share, then their partials meet in a tree (Linearizer::tree).
  const UOp* lidx =
      r->src(r->nsrcs() - 1)->op() == Op::SPECIAL ? r->src(r->nsrcs() - 1).get() : nullptr;
  const size_t nranges = r->nsrcs() - 1 - (lidx != nullptr ? 1 : 0);
  const int lanes = nranges == 0 ? 1 : reduce_lanes(t, r->src(nranges)->src(0));
  const int width = t.lanes();  // elements per lane (a vector REDUCE's lanes are vectors)
  // Stashed values are stored in a loop of their own first (an elementwise loop the target
  // vectorises as it does any), then read back by the reduce loop.
  for (const UOp* g : group)
    if (auto it = stash_.find(g); it != stash_.end()) materialize(p, it->second);

  std::vector<uint32_t> acc(n);
  auto init_lanes = [&](int scope, size_t g, uint32_t into) {
    const uint32_t init = constant(reduce_identity(static_cast<Op>(group[g]->arg_int()), t));
    for (int l = 0; l < lanes; ++l) {
      uint32_t idx =
          add(scope, PG_OP_INDEX, reg, {into, constant(const_int(offset_t(), int64_t{l} * width))});
      add(scope, PG_OP_STORE, dtypes::void_, {idx, init});
    }
  };
  for (size_t g = 0; g < n; ++g) {
    acc[g] = add(p, PG_OP_DEFINE_REG, reg, {}, arg_i(int64_t{lanes} * width));
    init_lanes(p, g, acc[g]);
  }
  const size_t full = lanes > 1 ? nranges - 1 : nranges;
  // A long float sum in blocks: each iteration of its outermost loop (split in two when it is
  // the only one, or its steps of lanes when it is split in lanes alone) sums into partial
  // accumulators, added to the sum after it, so each
  // accumulator's rounding error grows with the block and the block count, not with all the
  // values it adds (a column sum of 4096 rows: 4e-6 -> 5e-7 relative; torch's pairwise
  // kernels 2e-7). Not a product's sum (the upcast matmul's, whose k slices already cut it).
  bool staged = false;
  for (size_t i = 1; i <= nranges; ++i) staged = staged || stages_.count(r->src(i)->arg_int());
  // (Not a staged tile's: its slices already cut the sums short.)
  const BlockedSum blocked = staged ? BlockedSum{} : blocked_sum(group, full, lanes);
  std::vector<uint32_t> part(blocked.on ? n : 0);
  for (size_t g = 0; g < part.size(); ++g)
    part[g] = add(p, PG_OP_DEFINE_REG, reg, {}, arg_i(int64_t{lanes} * width));
  const std::vector<uint32_t>& into = blocked.on ? part : acc;
  // group[g]'s value, with range `k` at `at` (k null: as it is), added into lane `lane` of
  // dst[g] in scope `sc`.
  auto add_value = [&](int sc, size_t g, const std::vector<uint32_t>& dst, const UOpRef& lane,
                       const UOp* k, const UOpRef& at) {
    UOpRef v = group[g]->src(0);
    if (k != nullptr) {
      v = simplify_indexing(substitute_range(v, k, at));
      keep_.push_back(v);
    }
    accumulate(sc, static_cast<Op>(group[g]->arg_int()), t, dst[g], lane, v);
  };
  // The block's partial sums join the sums, in the block's loop after the inner ones.
  auto join_parts = [&](int sc) {
    for (size_t g = 0; g < n; ++g)
      for (int l = 0; l < lanes; ++l) {
        const uint32_t at = constant(const_int(offset_t(), int64_t{l} * width));
        const uint32_t pi = add(sc, PG_OP_INDEX, reg, {part[g], at});
        const uint32_t ai = add(sc, PG_OP_INDEX, reg, {acc[g], at});
        const uint32_t sum =
            add(sc, PG_OP_ADD, t, {add(sc, PG_OP_LOAD, t, {ai}), add(sc, PG_OP_LOAD, t, {pi})});
        add(sc, PG_OP_STORE, dtypes::void_, {ai, sum});
      }
  };
  const UOpRef lane0 = const_int(offset_t(), 0);
  std::vector<int> loops;
  int s = p;
  int outer = -1;            // the blocked sum's outer loop
  UOpRef split_k, split_at;  // a split single range: k -> k0 * B + k1
  UOpRef split_rest;         // ...and its last end % B values, past the blocks
  for (size_t i = 1; i <= full; ++i) {
    if (i == 1 && blocked.on && blocked.block > 0) {
      const UOp* k = r->src(1).get();
      const int64_t id0 = next_id_++, id1 = next_id_++;
      const UOpRef end0 = simplify(k->src(0) / blocked.block);
      const UOpRef end1 = const_int(k->src(0)->dtype(), blocked.block);
      split_rest = simplify(k->src(0) % blocked.block);
      keep_.push_back(split_rest);
      keep_.push_back(end0);
      keep_.push_back(end1);
      outer = s = open_loop(s, id0, end0);
      loops.push_back(s);
      for (size_t g = 0; g < n; ++g) init_lanes(s, g, part[g]);
      s = open_loop(s, id1, end1);
      loops.push_back(s);
      split_k = r->src(1);
      split_at = range(end0, id0) * blocked.block + range(end1, id1);
      keep_.push_back(split_at);
      continue;
    }
    s = open_loop(s, r->src(i)->arg_int(), r->src(i)->src(0));
    loops.push_back(s);
    if (auto it = stages_.find(r->src(i)->arg_int()); it != stages_.end()) {
      // The group's threads store this iteration's tiles, then wait for one another.
      for (const UOpRef& st : it->second) {
        std::vector<uint32_t> srcs;
        for (const UOpRef& src : st->srcs()) srcs.push_back(value(src, s));
        add(s, PG_OP_STORE, dtypes::void_, std::move(srcs));
      }
      add(s, PG_OP_BARRIER, dtypes::void_, {});
    }
    if (i == 1 && blocked.on) {
      outer = s;
      for (size_t g = 0; g < n; ++g) init_lanes(s, g, part[g]);
    }
  }
  if (lanes == 1) {
    for (size_t g = 0; g < n; ++g) add_value(s, g, into, lane0, split_k.get(), split_at);
  } else {
    const UOp* k = r->src(nranges).get();
    const UOpRef& end = k->src(0);
    const UOpRef main_end = simplify(end / lanes);
    const UOpRef tail_end = simplify(end % lanes);
    keep_.push_back(main_end);
    keep_.push_back(tail_end);
    bool branchy = false;
    for (const UOp* g : group) branchy = branchy || has_selects(g->src(0));
    // On a target whose scalar loops nothing vectorises (PG_CAP_EXPLICIT_SIMD), values whose
    // loads are contiguous along k are computed for the lanes at once, as one vector added
    // into the accumulators' lanes as one vector (its lanes then combined as below).
    bool as_vector = (target_.caps.flags & PG_CAP_EXPLICIT_SIMD) != 0 && width == 1;
    for (const UOp* g : group)
      as_vector = as_vector && upcast::vectorizable(UOp::make(Op::SINK, dtypes::void_, {g->src(0)}),
                                                    k, lanes, true, true);
    // The values for k = k0 * lanes + l, l < lanes, added into `dst`'s lanes in scope `sm`.
    auto lane_values = [&](int sm, const UOpRef& k0, const std::vector<uint32_t>& dst) {
      keep_.push_back(k0);
      if (as_vector) {
        for (size_t g = 0; g < n; ++g) {
          const UOpRef v = upcast::Vectorizer(k, k0 * lanes, lanes).run(group[g]->src(0));
          keep_.push_back(v);
          accumulate(sm, static_cast<Op>(group[g]->arg_int()), t.vec(lanes), dst[g], lane0, v);
        }
      } else if (branchy) {
        // The lanes as a loop with a constant trip count (not unrolled): its iterations touch
        // distinct accumulators, so clang's loop vectoriser turns it into vector code without
        // reordering a float sum, however large the value (SLP gave up on the unrolled copies
        // of a decomposed exp2). The accumulators stay in memory, so plain values keep the
        // unrolled form below, which SLP keeps in registers.
        const int64_t lane_id = next_id_++;
        const UOpRef lane = range(const_int(dtypes::index, lanes), lane_id);
        const int sl = open_loop(sm, lane_id, lane->src(0));
        for (size_t g = 0; g < n; ++g) add_value(sl, g, dst, lane, k, k0 * lanes + lane);
        scopes_[sl].open = false;
      } else {
        for (int l = 0; l < lanes; ++l)
          for (size_t g = 0; g < n; ++g)
            add_value(sm, g, dst, const_int(dtypes::index, l), k, k0 * lanes + l);
      }
    };
    if (full == 0 && blocked.on) {
      // One long range: its steps of `lanes` values in blocks, each summed into partial
      // sums added to the sums after it (softmax over 50257 columns: 3.9e-6 -> 1.2e-6 relative),
      // then the steps past the last whole block.
      const int64_t steps = main_end->arg_int(), b = blocked.block, blocks = steps / b;
      const int64_t outer_id = next_id_++, inner_id = next_id_++;
      const UOpRef ob = range(const_int(dtypes::index, blocks), outer_id);
      const UOpRef ib = range(const_int(dtypes::index, b), inner_id);
      const int so = open_loop(s, outer_id, ob->src(0));
      for (size_t g = 0; g < n; ++g) init_lanes(so, g, part[g]);
      const int si = open_loop(so, inner_id, ib->src(0));
      lane_values(si, ob * b + ib, part);
      scopes_[si].open = false;
      join_parts(so);
      scopes_[so].open = false;
      if (steps % b != 0) {
        const int64_t rest_id = next_id_++;
        const UOpRef kr = range(const_int(dtypes::index, steps % b), rest_id);
        const int sr = open_loop(s, rest_id, kr->src(0));
        lane_values(sr, kr + blocks * b, acc);
        scopes_[sr].open = false;
      }
    } else {
      const int64_t main_id = next_id_++;
      const int sm = open_loop(s, main_id, main_end);
      lane_values(sm, range(main_end, main_id), into);
      scopes_[sm].open = false;
    }
    if (!(tail_end->op() == Op::CONST && tail_end->arg_int() == 0)) {
      const int64_t tail_id = next_id_++;
      const UOpRef kt = range(tail_end, tail_id);
      const int st = open_loop(s, tail_id, tail_end);
      // (past a blocked single range's blocks: into the sums themselves)
      for (size_t g = 0; g < n; ++g)
        add_value(st, g, full == 0 ? acc : into, lane0, k, main_end * lanes + kt);
      scopes_[st].open = false;
    }
  }
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    if (*it == outer) join_parts(outer);
    if (stages_.count(scopes_[*it].loop_id)) add(*it, PG_OP_BARRIER, dtypes::void_, {});
    scopes_[*it].open = false;
  }
  if (split_rest && !(split_rest->op() == Op::CONST && split_rest->arg_int() == 0)) {
    // A symbolic range's values past its whole blocks, straight into the sums.
    const int64_t rest_id = next_id_++;
    const UOpRef kr = range(split_rest, rest_id);
    const UOpRef at = simplify(split_k->src(0) - split_rest) + kr;
    keep_.push_back(at);
    const int sr = open_loop(p, rest_id, split_rest);
    for (size_t g = 0; g < n; ++g) add_value(sr, g, acc, lane0, split_k.get(), at);
    scopes_[sr].open = false;
  }

  std::vector<uint32_t> results(n);
  for (size_t g = 0; g < n; ++g) {
    const Op op = static_cast<Op>(group[g]->arg_int());
    auto lane_value = [&](int l) {
      uint32_t idx =
          add(p, PG_OP_INDEX, reg, {acc[g], constant(const_int(offset_t(), int64_t{l} * width))});
      return add(p, PG_OP_LOAD, t, {idx});
    };
    results[g] = lane_value(0);
    for (int l = 1; l < lanes; ++l) results[g] = add(p, to_pg(op), t, {results[g], lane_value(l)});
  }
  if (lidx != nullptr) results = tree(p, group, results, lidx);
  for (size_t g = 1; g < n; ++g) memo_.emplace(std::make_pair(group[g], p), results[g]);
  return results[0];
}

std::vector<uint32_t> Linearizer::tree(int p, const std::vector<const UOp*>& group,
                                       const std::vector<uint32_t>& parts, const UOp* lidx) {
  // Each thread stores its partial at [lidx]; then for s = L/2, L/4, ..., 1 the threads below
  // s add [lidx + s] into [lidx], a barrier after each step; every thread reads [0]. The last
  // barrier keeps the array from being written again (a reduce in a loop) before all have
  // read it. Gated loads and stores, not branches: every thread reaches every barrier.
  const int64_t threads = lidx->src(0)->arg_int();
  const DType t = group.front()->dtype();
  const DType lp = t.scalar_type().ptr(AddrSpace::local);
  const uint32_t me = value(lidx->ref(), p);
  const size_t n = group.size();
  std::vector<uint32_t> arrays(n), mine(n), out(n);
  for (size_t g = 0; g < n; ++g) {
    arrays[g] = add(0, PG_OP_DEFINE_LOCAL, lp, {}, arg_i(threads));
    mine[g] = add(p, PG_OP_INDEX, lp, {arrays[g], me});
    add(p, PG_OP_STORE, dtypes::void_, {mine[g], parts[g]});
  }
  add(p, PG_OP_BARRIER, dtypes::void_, {});
  for (int64_t s = threads / 2; s >= 1; s /= 2) {
    const uint32_t step = constant(const_int(lidx->dtype(), s));
    const uint32_t below = add(p, PG_OP_CMPLT, dtypes::bool_, {me, step});
    const uint32_t other = add(p, PG_OP_ADD, lidx->dtype(), {me, step});
    for (size_t g = 0; g < n; ++g) {
      const Op op = static_cast<Op>(group[g]->arg_int());
      const uint32_t identity = constant(reduce_identity(op, t));
      const uint32_t a = add(p, PG_OP_LOAD, t, {mine[g], identity, below});
      const uint32_t at = add(p, PG_OP_INDEX, lp, {arrays[g], other});
      const uint32_t b = add(p, PG_OP_LOAD, t, {at, identity, below});
      add(p, PG_OP_STORE, dtypes::void_, {mine[g], add(p, to_pg(op), t, {a, b}), below});
    }
    add(p, PG_OP_BARRIER, dtypes::void_, {});
  }
  const uint32_t zero = constant(const_int(lidx->dtype(), 0));
  for (size_t g = 0; g < n; ++g)
    out[g] = add(p, PG_OP_LOAD, t, {add(p, PG_OP_INDEX, lp, {arrays[g], zero})});
  add(p, PG_OP_BARRIER, dtypes::void_, {});
  return out;
}

}  // namespace polygrad::codegen::detail
