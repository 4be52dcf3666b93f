// The order of an elementwise kernel's loops (see loop_order.hpp).
#include "codegen/loop_order.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include <vector>
#include "codegen/cpu_tuning.hpp"

#include "codegen/affine.hpp"
#include "codegen/upcast_parts.hpp"
#include "ir/graph.hpp"

namespace polygrad::codegen {

namespace {

constexpr double kLineBytes = 64;

/// The number of elements the access `u` walks over `ranges`: the product of the extents of
/// those its offset depends on (a symbolic extent, a batch, counted as kSymbolicExtent).
double footprint(const UOp* u, const std::vector<const UOp*>& ranges) {
  constexpr double kSymbolicExtent = 64;
  double n = 1;
  for (const UOp* r : ranges) {
    const std::optional<int64_t> c = coefficient(u->src(1).get(), r);
    if (c && *c == 0) continue;
    n *= r->src(0)->op() == Op::CONST ? static_cast<double>(r->src(0)->arg_int()) : kSymbolicExtent;
  }
  return n;
}

/// How contiguous the kernel's accesses (INDEX nodes `accesses`) are along the range `r`, each
/// weighted by its footprint over the largest one's: a batch norm's per-channel parameters,
/// contiguous along the channels, weigh nothing beside the activations they scale, contiguous
/// along the positions (weighted alike, they moved the channels innermost: 0.2 -> 0.8 ms per
/// kernel).
double contiguity(const std::vector<const UOp*>& accesses, const std::vector<const UOp*>& ranges,
                  const UOp* r) {
  double largest = 0;
  for (const UOp* u : accesses) largest = std::max(largest, footprint(u, ranges));
  double score = 0;
  for (const UOp* u : accesses) {
    const std::optional<int64_t> c = coefficient(u->src(1).get(), r);
    if (!c || *c == 0) continue;
    const double weight = footprint(u, ranges) / largest;
    const double bytes =
        static_cast<double>(std::llabs(*c) * u->src(0)->dtype().base().scalar_size());
    if (std::llabs(*c) == 1)
      score += weight;
    else if (bytes < kLineBytes)
      score += weight * (1 - bytes / kLineBytes);
  }
  return score;
}

}  // namespace

UOpRef order_loops(const UOpRef& sink) {
  const std::vector<const UOp*> order = toposort(sink);
  std::vector<const UOp*> ranges, accesses;
  for (const UOp* u : order) {
    if (u->op() == Op::REDUCE) return sink;
    if (u->op() == Op::RANGE) ranges.push_back(u);
    if (u->op() == Op::INDEX && u->src(0)->op() == Op::DEFINE_GLOBAL) accesses.push_back(u);
  }
  if (ranges.size() < 3) return sink;
  std::sort(ranges.begin(), ranges.end(),
            [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
  const UOp* inner = ranges.back();
  const UOp* best = inner;
  double best_score = contiguity(accesses, ranges, inner);
  const double inner_score = best_score;
  for (size_t i = 1; i + 1 < ranges.size(); ++i)
    if (const double s = contiguity(accesses, ranges, ranges[i]); s > best_score) {
      best = ranges[i];
      best_score = s;
    }
  if (best == inner || best_score < inner_score + 1) return sink;
  // The same ids, handed out in the new order: `best` takes the last.
  std::vector<int64_t> ids;
  for (const UOp* r : ranges) ids.push_back(r->arg_int());
  std::vector<const UOp*> reordered;
  for (const UOp* r : ranges)
    if (r != best) reordered.push_back(r);
  reordered.push_back(best);
  std::unordered_map<const UOp*, UOpRef> renumber;
  for (size_t i = 0; i < reordered.size(); ++i)
    if (reordered[i]->arg_int() != ids[i])
      renumber.emplace(reordered[i], range(reordered[i]->src(0), ids[i]));
  return substitute(sink, renumber);
}

UOpRef tile_transposes(const UOpRef& sink) {
  constexpr int64_t kTile = cpu_tuning::kTransposeTile, kLineBytes = 64;
  const std::vector<const UOp*> order = toposort(sink);
  std::vector<const UOp*> ranges, loads;
  int64_t top = 0;
  for (const UOp* u : order) {
    if (u->op() == Op::REDUCE) return sink;
    if (u->op() == Op::RANGE) {
      ranges.push_back(u);
      top = std::max(top, u->arg_int());
    }
    if (u->op() == Op::LOAD && u->src(0)->op() == Op::INDEX &&
        u->src(0)->src(0)->op() == Op::DEFINE_GLOBAL)
      loads.push_back(u->src(0).get());
  }
  if (ranges.size() < 2) return sink;
  std::sort(ranges.begin(), ranges.end(),
            [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
  const UOp* b = ranges.back();
  auto long_enough = [&](const UOp* r) {
    return r->src(0)->op() != Op::CONST || r->src(0)->arg_int() > kTile;
  };
  if (!long_enough(b)) return sink;
  for (const UOpRef& st : sink->srcs()) {  // every store contiguous along b
    const std::optional<int64_t> c = coefficient(st->src(0)->src(1).get(), b);
    if (!c || *c != 1) return sink;
  }
  // a: the range some load is contiguous along while striding a line or more along b.
  const UOp* a = nullptr;
  for (size_t i = 0; i + 1 < ranges.size() && a == nullptr; ++i) {
    if (!long_enough(ranges[i])) continue;
    for (const UOp* ld : loads) {
      const std::optional<int64_t> ca = coefficient(ld->src(1).get(), ranges[i]);
      const std::optional<int64_t> cb = coefficient(ld->src(1).get(), b);
      const int64_t elem = ld->src(0)->dtype().base().scalar_size();
      if (ca && *ca == 1 && cb && std::llabs(*cb) * elem >= kLineBytes) {
        a = ranges[i];
        break;
      }
    }
  }
  if (a == nullptr) return sink;
  // Loops: the ranges before a, a0, those between, b0, a1, b1 (new ids in that order).
  int64_t next = top + 1;
  std::unordered_map<const UOp*, UOpRef> subs;
  int64_t a0_id = 0, b0_id = 0;
  for (const UOp* r : ranges) {
    if (r == a) {
      a0_id = next++;
    } else if (r == b) {
      b0_id = next++;
    } else {
      subs.emplace(r, range(r->src(0), next++));
    }
  }
  // 16, or 8 where that divides the extent and 16 does not (1000: no partial tile to gate).
  auto tile = [&](const UOp* r) {
    const UOpRef& end = r->src(0);
    const bool half =
        end->op() == Op::CONST && end->arg_int() % kTile != 0 && end->arg_int() % (kTile / 2) == 0;
    return half ? kTile / 2 : kTile;
  };
  // r -> r0 * T + r1: the blocks of a RangeSplit, looped over by an inner range instead of
  // copied (a last partial tile clamped, its stores gated).
  const upcast::RangeSplit sa(a, tile(a), a0_id), sb(b, tile(b), b0_id);
  const UOpRef a1 = range(const_int(dtypes::index, tile(a)), next);
  const UOpRef b1 = range(const_int(dtypes::index, tile(b)), next + 1);
  subs.emplace(a, sa.at(a1));
  subs.emplace(b, sb.at(b1));
  const UOpRef gate = upcast::both(sa.gate_at(a1), sb.gate_at(b1));
  std::vector<UOpRef> stores;
  for (const UOpRef& st : sink->srcs()) {
    UOpRef moved = substitute(st, subs);
    if (gate)
      moved = upcast::gated_store(
          moved, upcast::both(moved->nsrcs() == 3 ? moved->src(2) : UOpRef(), gate));
    stores.push_back(moved);
  }
  return UOp::make(Op::SINK, sink->dtype(), stores, sink->arg());
}

}  // namespace polygrad::codegen
