// Buffers as aligned ranges of one linear memory: a first-fit free list that merges neighbours,
// growing the memory when nothing fits, up to the 4 GiB of a 32-bit WebAssembly memory. It
// depends on LinearMemory only, so a browser build can use it with the JS engine's memory.
#ifndef POLYGRAD_WASM_ALLOCATOR_HPP
#define POLYGRAD_WASM_ALLOCATOR_HPP

#include <cstdint>
#include <map>

#include "engine.hpp"

namespace polygrad::wasm {

inline constexpr uint32_t kAlignment = 64;

class Allocator {
 public:
  explicit Allocator(LinearMemory& memory) : memory_(memory) {}
  /// The offset of `nbytes` fresh bytes (0 bytes take one aligned slot, so every offset is
  /// unique). Throws sdk::Error(PG_ERR_OUT_OF_MEMORY) naming the size asked and the size in
  /// use when the memory cannot hold it.
  uint64_t allocate(uint64_t nbytes);
  /// Return the range at `offset` (from allocate) to the free list.
  void release(uint64_t offset);
  uint64_t bytes_in_use() const { return in_use_; }

 private:
  LinearMemory& memory_;
  std::map<uint64_t, uint64_t> free_;  ///< offset -> bytes, never adjacent
  std::map<uint64_t, uint64_t> used_;  ///< offset -> bytes
  uint64_t top_ = 0;                   ///< the end of the highest range ever handed out
  uint64_t in_use_ = 0;
};

}  // namespace polygrad::wasm

#endif
