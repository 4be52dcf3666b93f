// The memory planner (see memory_plan.hpp).
#include "runtime/memory_plan.hpp"

#include "ir/graph.hpp"

#include <map>
#include <set>

namespace polygrad::runtime {

std::vector<SharedMemory> plan_shared_memory(const schedule::Schedule& s,
                                             const std::function<bool(const UOp*)>& fresh,
                                             const std::function<std::string(const UOp*)>& device) {
  std::vector<SharedMemory> out;
  std::set<const UOp*> planned;
  for (const UOpRef& b : s.intermediates)
    if (fresh(b.get())) planned.insert(b.get());
  // A buffer an output reads is the output's memory, even when the schedule made it as an
  // intermediate first (a root that other kernels of the schedule also read): never shared.
  for (const UOpRef& o : s.outputs)
    for (const UOp* u : toposort(o))
      if (u->op() == Op::BUFFER) planned.erase(u);
  if (planned.empty()) return out;
  std::map<const UOp*, std::pair<size_t, size_t>> life;
  for (size_t i = 0; i < s.items.size(); ++i)
    for (const UOpRef& b : s.items[i].buffers) {
      if (!planned.count(b.get())) continue;
      auto [it, first] = life.try_emplace(b.get(), i, i);
      if (!first) it->second.second = i;
    }
  auto bytes = [](const UOp* b) {
    return static_cast<uint64_t>(lazy::buffer_count(b)) *
           static_cast<uint64_t>(b->dtype().itemsize());
  };
  struct Block {
    std::string device;
    const UOp* owner;
    uint64_t bytes;
  };
  std::vector<Block> free_blocks;
  std::map<const UOp*, const UOp*> owner_of;  // shared buffers only
  for (size_t i = 0; i < s.items.size(); ++i) {
    for (const UOpRef& b : s.items[i].buffers) {
      auto it = life.find(b.get());
      if (it == life.end() || it->second.first != i || owner_of.count(b.get())) continue;
      const uint64_t need = bytes(b.get());
      const std::string dev = device(b.get());
      size_t best = free_blocks.size();
      for (size_t f = 0; f < free_blocks.size(); ++f)
        if (free_blocks[f].device == dev && free_blocks[f].bytes >= need &&
            (best == free_blocks.size() || free_blocks[f].bytes < free_blocks[best].bytes))
          best = f;
      if (best == free_blocks.size()) continue;
      owner_of[b.get()] = free_blocks[best].owner;
      out.push_back({b.get(), free_blocks[best].owner});
      free_blocks.erase(free_blocks.begin() + static_cast<std::ptrdiff_t>(best));
    }
    for (const UOpRef& b : s.items[i].buffers) {
      auto it = life.find(b.get());
      if (it == life.end() || it->second.second != i) continue;
      auto shared = owner_of.find(b.get());
      const UOp* owner = shared == owner_of.end() ? b.get() : shared->second;
      free_blocks.push_back({device(b.get()), owner, bytes(owner)});
      life.erase(it);
    }
  }
  return out;
}

}  // namespace polygrad::runtime
