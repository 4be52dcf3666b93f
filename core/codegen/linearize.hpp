// The linearizer: a checked kernel AST -> a flat SSA kernel program with loops.
//
// Algorithm (placement by scope tree, loop-invariant code motion by construction):
//
// 1. Dependencies. D(n), the loop ids a node depends on, is the union of its sources' sets; a
//    RANGE adds its own id; a REDUCE removes the ids it reduces over (its result no longer
//    varies with them).
// 2. Scopes. The program is a tree of scopes: the root (the kernel body of one work item), a
//    chain of output loops (the output RANGEs in ascending id; the outermost becomes
//    SPECIAL(GLOBAL, 0) when the target's global dim 0 covers its extent), and below any scope
//    the loops of each REDUCE instance placed there. Every scope holds an ordered body of
//    instructions and child scopes.
// 3. Placement. A node used from scope c is placed in the innermost scope on the path from c
//    to the root whose loop id is in D(n) (the root when D(n) is empty); a loop id of D(n)
//    that is not on the path is malformed input. A (node, scope) pair is emitted once and
//    reused. Sources are emitted first, from the node's own scope, so they land in the same
//    scope or an outer one. A REDUCE placed at scope p emits, in p: an accumulator
//    (DEFINE_REG), its initial STOREs, a child loop chain over its ranges, and after the loops
//    the LOAD of the result; its value is emitted from the innermost of its loops, so the parts
//    that do not depend on the reduce ranges land outside them (softmax's row max is computed
//    once per row, before the loop over the row's outputs).
// 4. Order. Emission is depth-first, sources first. A scope is open while something inside it
//    is being emitted; a new instruction or child goes into its scope's body just before the
//    first open child. Open children are always a suffix of a body (they close in LIFO order),
//    and everything an instruction uses was emitted earlier, into the same body before it or
//    into an ancestor body before the child that contains it. Flattening the tree (loop =
//    RANGE, body, END_RANGE) therefore yields a program in which every source precedes its
//    user; flatten() checks this again.
// 5. Reduction lanes. When the target has SIMD lanes for the dtype, the innermost range k
//    (extent E) of a REDUCE is split: a loop k0 over E / L runs L copies of the value with
//    k = k0 * L + l into L accumulators (independent chains the SLP vectoriser turns into
//    vector ops); when the value selects or compares (a decomposed exp2), the copies are a
//    loop l over the lanes instead, which the loop vectoriser handles. A tail loop over E % L
//    adds the rest into lane 0, and the lanes are combined after the loops. A long float sum
//    over k alone runs its E / L steps in blocks, each into partial sums added to the lanes
//    after it (see Linearizer::reduce). A vector REDUCE (from the upcast, optimize.hpp) is not
//    split: its accumulator is an array of lanes * W scalars read and written W at a time.
// 6. Shared reduce loops. REDUCEs over the same RANGE nodes (same dtype, neither using the
//    other) that are placed in the same scope are emitted together: one accumulator each, one
//    loop nest, and every value accumulated in the same loop body.
// 7. Stashes. Before the loops of a REDUCE with a stash (stash.hpp), a loop over its range
//    stores the stash's value at the stash's index; the REDUCE reads them back from there.
#ifndef POLYGRAD_CODEGEN_LINEARIZE_HPP
#define POLYGRAD_CODEGEN_LINEARIZE_HPP

#include <cstdint>
#include <vector>

#include "codegen/lower.hpp"
#include "codegen/stash.hpp"
#include "codegen/strategy.hpp"

namespace polygrad::codegen {

/// What the linearizer produced.
struct Linearized {
  std::vector<pg_instruction> instructions;
  std::vector<uint32_t> operands;
  uint32_t buffer_count = 0;
  std::vector<Var> vars;         ///< PARAM_SCALAR slots, sorted by name: every variable read by
                                 ///< the stores, the stashes or the stages
  UOpRef global0;                ///< extent of the SPECIAL(GLOBAL, 0) loop, or null
  std::vector<UOpRef> out_ends;  ///< extents of the output loops, outermost first
  bool has_reduce = false;
};

/// Linearize a checked, simplified kernel AST for `target`, with the loops that store the
/// values of `stashes` (stash.hpp). `grouped`: the AST comes from the group strategy
/// (group/plan.hpp) and holds its launch indices as SPECIALs; its output ranges all stay loops,
/// reduces are not split in lanes, and a REDUCE whose last source is a SPECIAL thread index
/// joins its threads' partials in local memory (a tree with barriers). `stages`: stores each
/// iteration of a reduce loop runs first, with barriers around the loops inside it.
Linearized linearize(const UOpRef& sink, const Target& target,
                     const std::vector<Stash>& stashes = {}, bool grouped = false,
                     const std::vector<Stage>& stages = {});

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_LINEARIZE_HPP
