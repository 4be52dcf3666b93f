// Small helpers over a kernel's index expressions, shared by the kernel builder's files
// (kernel_builder.cpp, kernel_reduce.cpp).
#ifndef POLYGRAD_SCHEDULE_KERNEL_INDEX_HPP
#define POLYGRAD_SCHEDULE_KERNEL_INDEX_HPP

#include "ir/graph.hpp"
#include "ir/uop.hpp"

#include <set>
#include <vector>

namespace polygrad::schedule {

inline UOpRef idx_const(int64_t v) {
  return const_int(dtypes::index, v);
}

/// Adds the RANGEs `e` uses to `out`.
inline void ranges_in(const UOpRef& e, std::set<const UOp*>& out) {
  for (const UOp* u : toposort(e))
    if (u->op() == Op::RANGE) out.insert(u);
}

/// The RANGEs an index vector uses.
inline std::set<const UOp*> ranges_of(const std::vector<UOpRef>& idx) {
  std::set<const UOp*> deps;
  for (const UOpRef& i : idx) ranges_in(i, deps);
  return deps;
}

/// Whether an index divides a range (x // c): a view that sends c neighbouring positions to one
/// element (a pool's gradient broadcast over its window), which the codegen, placing a value by
/// the ranges it uses, would recompute for each of them. Not when the index also takes x % c:
/// then x is split in two axes, as a reshape of a flat range does (a long sum's blocks read
/// back as rows and columns), and every position still reads an element of its own.
inline bool divides_a_range(const std::vector<UOpRef>& idx) {
  std::vector<const UOp*> divs, mods;
  for (const UOpRef& i : idx)
    for (const UOp* u : toposort(i)) {
      if (u->op() == Op::IDIV && u->src(0)->op() != Op::CONST) divs.push_back(u);
      if (u->op() == Op::MOD) mods.push_back(u);
    }
  for (const UOp* d : divs) {
    bool split = false;
    for (const UOp* m : mods) split = split || (m->src(0) == d->src(0) && m->src(1) == d->src(1));
    if (!split) return true;
  }
  return false;
}

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_KERNEL_INDEX_HPP
