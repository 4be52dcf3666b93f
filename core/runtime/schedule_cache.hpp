// The schedule cache: schedules keyed by graph structure, so a graph rebuilt with the same ops
// and shapes over other buffers (every training step, every call of a model) skips scheduling.
//
// A lookup reads the graph once: its nodes in toposort order, each with its op, dtype, arg and
// its sources' positions in that order, and its inputs' devices, hashed leaving out which
// buffers the inputs are; an entry of that hash is then compared node by node. A miss builds
// the key graph (each input BUFFER replaced by a placeholder numbered in toposort order) and
// schedules it. A hit maps the cached schedule's placeholders to the real inputs and fresh
// buffers for everything the schedule creates.
//
// A graph over a bound variable (tensor/symbolic.hpp) is keyed on the variable, not its value:
// its schedule is generalised over the variable (runtime/symbolic_schedule.hpp) so that every
// value runs the same compiled kernels, with the value passed at launch; a graph that does not
// generalise (two variables, schedules that differ in structure between values) is cached per
// value.
#ifndef POLYGRAD_RUNTIME_SCHEDULE_CACHE_HPP
#define POLYGRAD_RUNTIME_SCHEDULE_CACHE_HPP

#include "runtime/launch.hpp"
#include "schedule/schedule.hpp"

#include <memory>
#include <string>
#include <vector>

namespace polygrad::runtime {

struct CacheEntry;

/// A cached schedule bound to one graph's buffers: its inputs, and fresh buffers for everything
/// the schedule creates. What realize runs; the memory plan and each kernel's launch arguments
/// come from the cache entry, worked out on its first run.
class BoundSchedule {
 public:
  /// `value`: the variable's value, for an entry generalised over one (else unused).
  BoundSchedule(std::shared_ptr<CacheEntry> entry, std::vector<UOpRef> buffers, int64_t value = 0);
  size_t size() const;
  /// The schedule with the real buffers (a capture records it; POLYGRAD_DEBUG=2 prints it).
  schedule::Schedule materialize() const;
  /// Gives intermediates with disjoint lifetimes one allocation, as plan_memory would.
  void share_memory() const;
  /// Item `i` over the cache's placeholders.
  const schedule::Item& item(size_t i) const;
  /// The BUFFER item `i`'s slot `slot` is bound to.
  const UOp* buffer(size_t i, size_t slot) const;
  /// Item `i`'s kernel and launch arguments (empty for a copy or a host step), compiled on first
  /// use and kept per program generation and value.
  KernelLaunch prepare(size_t i) const;
  /// The launch of item `i` with its prepared kernel.
  Launch launch(size_t i, KernelLaunch kernel) const;
  /// The realised form of each root.
  std::vector<UOpRef> outputs() const;

 private:
  std::shared_ptr<CacheEntry> entry_;
  std::vector<UOpRef> buffers_;  // by slot: the inputs, then the created buffers
  int64_t value_ = 0;
  /// A generalised entry's items with this value's launch variables and copy sizes.
  std::vector<schedule::Item> items_;
};

/// The schedule that realises `roots` on `device`, from the cache when possible.
BoundSchedule bind_schedule(const std::vector<UOpRef>& roots, const std::string& device);

/// The same with its real buffers.
schedule::Schedule cached_schedule(const std::vector<UOpRef>& roots, const std::string& device);

/// Number of cached schedules and of hits so far (tests and diagnostics).
struct ScheduleCacheStats {
  size_t entries = 0;
  size_t hits = 0;
};
ScheduleCacheStats schedule_cache_stats();

/// The most schedules the cache keeps (2048 unless set; tests set a small one): the least
/// recently used are dropped beyond it.
void set_schedule_cache_limit(size_t limit);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_SCHEDULE_CACHE_HPP
