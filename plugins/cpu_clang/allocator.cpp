// Host-memory buffers: 64-byte aligned, zero-size allocations valid, bounds-checked copies;
// handles over the host's own memory (wrap_host).
#include <cstdint>
#include <cstdlib>
#include <new>

#include <polygrad/huge_pages.hpp>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

Buffer* buffer_alloc(uint64_t nbytes) {
  if (nbytes > UINT64_MAX - kAlignment)
    sdk::fail(PG_ERR_OUT_OF_MEMORY, "cpu: cannot allocate " + std::to_string(nbytes) + " bytes");
  // At least one alignment unit, so a zero-size buffer is still a unique, valid handle.
  uint64_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  // A large buffer on huge pages (polygrad/huge_pages.hpp), as numpy's arrays.
  void* data = rounded >= sdk::kHugePagesFrom ? sdk::huge_page_alloc(rounded)
                                              : std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr)
    sdk::fail(PG_ERR_OUT_OF_MEMORY, "cpu: cannot allocate " + std::to_string(nbytes) + " bytes");
  auto* buffer = new (std::nothrow) Buffer{data, nbytes};
  if (buffer == nullptr) {
    std::free(data);
    sdk::fail(PG_ERR_OUT_OF_MEMORY, "cpu: cannot allocate a buffer handle");
  }
  return buffer;
}

Buffer* buffer_wrap(void* host, uint64_t nbytes) {
  // Only memory aligned like the cpu's own buffers: a kernel's vector loads of a row that
  // starts mid cache line each touch two lines (a 256 x 784 matmul ran 1.4x slower on a numpy
  // array at a 16-byte offset). The host copies anything else once, into an aligned buffer.
  if (reinterpret_cast<uintptr_t>(host) % kAlignment != 0)
    sdk::fail(PG_ERR_UNSUPPORTED,
              "cpu: host memory at " + std::to_string(reinterpret_cast<uintptr_t>(host)) +
                  " is not aligned to " + std::to_string(kAlignment) + " bytes");
  auto* buffer = new (std::nothrow) Buffer{host, nbytes, false};
  if (buffer == nullptr) sdk::fail(PG_ERR_OUT_OF_MEMORY, "cpu: cannot allocate a buffer handle");
  return buffer;
}

void buffer_free(Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->owned) std::free(buffer->data);
  delete buffer;
}

void check_range(const Buffer& buffer, uint64_t offset, uint64_t n, const char* what) {
  if (offset > buffer.size || n > buffer.size - offset)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string("cpu: ") + what + " of " + std::to_string(n) +
                                           " bytes at offset " + std::to_string(offset) +
                                           " is outside the buffer of " +
                                           std::to_string(buffer.size) + " bytes");
}

}  // namespace polygrad::cpu_clang
