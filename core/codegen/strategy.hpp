// The target-strategy seam: how a kernel AST is planned for a kind of target, chosen from the
// target's capabilities alone (nothing here names a plugin or a vendor).
// - The CPU strategy (no PG_CAP_GROUPS; cpu_strategy.cpp): one launch dimension over the
//   outermost output range, register tiles and panel copies for matmuls (optimize.hpp), reduces
//   split into SIMD lanes in the linearizer, transcendentals decomposed where lanes pay for it.
//   Its tuning thresholds are in cpu_tuning.hpp, each with its reason.
// - The group strategy (PG_CAP_GROUPS; group/plan.hpp): groups of threads, local memory and
//   barriers; its thresholds are in group/tuning.hpp.
// Both hand the linearizer an AST; lower() turns either into a program and its launch.
#ifndef POLYGRAD_CODEGEN_STRATEGY_HPP
#define POLYGRAD_CODEGEN_STRATEGY_HPP

#include <array>
#include <cstdint>
#include <vector>

#include "codegen/lower.hpp"
#include "codegen/stash.hpp"

namespace polygrad::codegen {

/// Stores the group's threads run together at the start of each iteration of a reduce loop,
/// before its inner loops (the group strategy's tiles: operands staged in local memory). A
/// barrier follows them, and another ends the iteration, so no thread overwrites a tile that
/// another still reads.
struct Stage {
  int64_t loop_id = 0;         ///< the RANGE (a REDUCE's outermost) whose iterations stage
  std::vector<UOpRef> stores;  ///< STOREs into DEFINE_LOCAL arrays
};

/// A kernel AST planned for a target.
struct Planned {
  UOpRef sink;                             ///< what the linearizer takes
  std::vector<Stash> stashes;              ///< CPU: values stored before their reduce (stash.hpp)
  bool grouped = false;                    ///< the AST holds its launch indices (SPECIALs)
  std::array<UOpRef, 3> groups;            ///< grouped: groups per launch dim
  std::array<uint32_t, 3> local{1, 1, 1};  ///< grouped: threads per group per dim
  std::vector<UOpRef> out_ends;            ///< grouped: the original output extents (the name)
  std::vector<Stage> stages;               ///< grouped: tiles staged per reduce iteration
};

/// The CPU strategy. `scatter`: the stores' addresses depend on loaded values (their loops
/// keep the order they were built in).
Planned plan_cpu(const UOpRef& ast, const Target& target, bool scatter);

/// The group strategy (group/plan.hpp).
Planned plan_groups(const UOpRef& ast, const Target& target, bool scatter);

}  // namespace polygrad::codegen

#endif  // POLYGRAD_CODEGEN_STRATEGY_HPP
