// The panel cache: copies of a schedule's inputs (weights) in a matmul's panels, kept from one
// realize to the next for as long as the input is not written.
//
// A schedule reads a matmul operand from a copy in panels (codegen::panel_packing) made by
// kernels of the schedule (schedule::Item::packing). When that operand is an input of the
// schedule, a weight, the copy is the same every time until the weight changes: the cache
// keeps it by (device, input buffer, the copy's first kernel), with the input's write count
// that each of its kernels ran at (every launch counts a write of the buffer it stores into,
// note_packing_source_write; counted only for buffers the cache holds copies of, which is
// all it needs: a copy is made at the count of its making). A realize then binds the
// copy's buffer to the kept memory and runs its kernels only when the input was written since
// (an optimizer step: one new copy per step, however many products read the weight). The
// memory is counted and bounded: a new copy that needs room displaces only copies unused since
// it was last asked for (least recently used first), so weights used in turn that do not fit
// together keep a fixed part of their copies instead of evicting each other's (Cache::admit);
// a copy larger than the limit is not kept; a copy is dropped with its input's buffer. Not kept:
// copies of host memory the caller may write (from_host_memory), and copies made while a
// capture records (a replay runs every kernel it recorded).
#ifndef POLYGRAD_RUNTIME_PANEL_CACHE_HPP
#define POLYGRAD_RUNTIME_PANEL_CACHE_HPP

#include "schedule/schedule.hpp"

#include <cstddef>
#include <cstdint>

namespace polygrad::runtime {

/// What the cache holds and has done since the process started.
struct PanelCacheStats {
  size_t copies_made = 0;  ///< copies made (the kernels of one copy count once)
  size_t reuses = 0;       ///< times a current copy was used instead
  size_t entries = 0;      ///< copies held now
  uint64_t bytes = 0;      ///< their memory
  uint64_t limit = 0;      ///< the most memory they may hold
};
PanelCacheStats panel_cache_stats();

/// The most bytes of copies kept (an eighth of the machine's memory, at least 1 GiB, unless
/// set; 0 keeps none). Drops the least recently used down to it.
void set_panel_cache_limit(uint64_t bytes);

/// A packing item about to run: `item.packing` set, `source` and `packed` the BUFFER nodes its
/// slots are bound to. Binds `packed` to the kept copy (made when there is none) and says
/// whether the item must run; when it must, `ran()` after launching it records that the copy
/// holds the source's current contents.
class PackingUse {
 public:
  PackingUse(const schedule::Item& item, const UOp* source, const UOp* packed);
  /// False when the kept copy is current: the item is skipped.
  bool must_run() const { return must_run_; }
  void ran() const;

 private:
  bool must_run_ = true;
  bool kept_ = false;
  std::string device_;
  int64_t source_ = 0;
  const UOp* group_ = nullptr;
  int part_ = 0;
  uint64_t version_ = 0;
};

/// Counts a write into the buffer of id `id` (a launch that stores into it), when the cache
/// holds copies of it: they are stale from then on. One relaxed atomic load otherwise.
void note_packing_source_write(int64_t id);

/// Drops the copies of the buffer of id `id` (called when its BUFFER node dies).
void forget_packings(int64_t id);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_PANEL_CACHE_HPP
