// The group strategy: kernel ASTs planned for targets with groups (PG_CAP_GROUPS: GPUs).
//
// A kernel runs as a grid of groups of threads. plan_groups() rewrites the kernel AST so that
// its output loops become launch indices (SPECIAL nodes: gidx0 the group, lidx0 the thread in
// the group) in one of three forms:
// - flat: every output element is one thread's work. The output ranges are flattened into one
//   index f = gidx0 * L + lidx0 (L threads per group); a thread past the last element clamps
//   its index to the last one (its loads stay in bounds) and its stores are gated off. Reduces
//   run as loops inside the thread. Elementwise kernels, and reduces too short to share.
// - rows: one group per row. The output ranges a reduce depends on (the row: softmax's row,
//   a layernorm's) become the group index; every reduce over the row is shared by the group's
//   L threads: thread l sums the values l, l + L, l + 2L, ... (a loop the same length in every
//   thread), then the partial sums meet in local memory in a tree of log2(L) steps with a
//   barrier after each (the REDUCE gets the thread index as an extra source; the linearizer
//   emits the tree). The row's other output ranges (softmax's columns) are shared the same way:
//   a loop over the row in steps of L. Softmax and layernorm stay one kernel.
// - tiles (tiles.hpp): a matmul-shaped reduce: tiles of both operands staged in local memory.
// All loops are uniform across a group's threads (their trip counts do not depend on the
// thread), so every barrier is reached by every thread.
#ifndef POLYGRAD_CODEGEN_GROUP_PLAN_HPP
#define POLYGRAD_CODEGEN_GROUP_PLAN_HPP

#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// plan_groups() is declared in strategy.hpp, beside the CPU strategy.

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_GROUP_PLAN_HPP
