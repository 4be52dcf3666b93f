// The memory planner: which intermediates of a schedule can use another's memory because their
// lifetimes (first to last item that uses them) do not overlap. realize applies it to a
// schedule's real buffers; the schedule cache computes it once per entry, over placeholders.
#ifndef POLYGRAD_RUNTIME_MEMORY_PLAN_HPP
#define POLYGRAD_RUNTIME_MEMORY_PLAN_HPP

#include "schedule/schedule.hpp"

#include <functional>
#include <string>
#include <vector>

namespace polygrad::runtime {

/// `buffer` uses the memory of `owner` (which uses its own).
struct SharedMemory {
  const UOp* buffer;
  const UOp* owner;
};

/// The sharing for the intermediates of `s` that `fresh` says have no memory yet, leaving out
/// those an output reads (they are the output's memory): each takes, at its first use, the
/// smallest block large enough on its device among the blocks of buffers whose last use has
/// passed. In the order realize must apply them.
std::vector<SharedMemory> plan_shared_memory(const schedule::Schedule& s,
                                             const std::function<bool(const UOp*)>& fresh,
                                             const std::function<std::string(const UOp*)>& device);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_MEMORY_PLAN_HPP
