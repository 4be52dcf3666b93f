#include "allocator.hpp"

#include <polygrad/plugin_error.hpp>

#include <string>

namespace polygrad::wasm {

uint64_t Allocator::allocate(uint64_t nbytes) {
  const uint64_t size =
      nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  auto oom = [&] {
    sdk::fail(PG_ERR_OUT_OF_MEMORY, "wasm: out of memory: " + std::to_string(nbytes) +
                                        " bytes asked, " + std::to_string(in_use_) +
                                        " in use of the 4 GiB a 32-bit WebAssembly memory holds");
  };
  if (nbytes > kMaxMemoryBytes) oom();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    uint64_t at = it->first, left = it->second - size;
    free_.erase(it);
    if (left) free_[at + size] = left;
    used_[at] = size;
    in_use_ += size;
    return at;
  }
  // Nothing free fits: take it from the top, merging a free range that ends there.
  uint64_t at = top_;
  if (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second == top_) {
      at = last->first;
      free_.erase(last);
    }
  }
  if (at + size > kMaxMemoryBytes) {
    if (at != top_) free_[at] = top_ - at;
    oom();
  }
  uint64_t want = (at + size + kPageBytes - 1) / kPageBytes * kPageBytes;
  if (want > memory_.size() && !memory_.grow_to(want)) {
    if (at != top_) free_[at] = top_ - at;
    oom();
  }
  top_ = at + size;
  used_[at] = size;
  in_use_ += size;
  return at;
}

void Allocator::release(uint64_t offset) {
  auto it = used_.find(offset);
  if (it == used_.end()) return;
  uint64_t at = it->first, size = it->second;
  used_.erase(it);
  in_use_ -= size;
  auto next = free_.lower_bound(at);
  if (next != free_.end() && at + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      prev->second += size;
      return;
    }
  }
  free_[at] = size;
}

}  // namespace polygrad::wasm
