// The order of an elementwise kernel's loops (see loop_order.hpp).
#include "codegen/loop_order.hpp"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "codegen/affine.hpp"
#include "ir/graph.hpp"

namespace polygrad::codegen {

namespace {

constexpr double kLineBytes = 64;

/// How contiguous the kernel's accesses (INDEX nodes `accesses`) are along the range `r`.
double contiguity(const std::vector<const UOp*>& accesses, const UOp* r) {
  double score = 0;
  for (const UOp* u : accesses) {
    const std::optional<int64_t> c = coefficient(u->src(1).get(), r);
    if (!c || *c == 0) continue;
    const double bytes =
        static_cast<double>(std::llabs(*c) * u->src(0)->dtype().base().scalar_size());
    if (std::llabs(*c) == 1)
      score += 1;
    else if (bytes < kLineBytes)
      score += 1 - bytes / kLineBytes;
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
  double best_score = contiguity(accesses, inner);
  const double inner_score = best_score;
  for (size_t i = 1; i + 1 < ranges.size(); ++i)
    if (const double s = contiguity(accesses, ranges[i]); s > best_score) {
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

}  // namespace polygrad::codegen
