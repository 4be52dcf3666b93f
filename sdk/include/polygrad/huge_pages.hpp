// polygrad plugin SDK: host memory for large buffers on transparent huge pages (header-only).
//
// A buffer that starts on a 2 MiB boundary can be backed by huge pages, which the kernel
// gives (in its default `madvise` mode) to memory advised MADV_HUGEPAGE, as numpy asks for
// its arrays of 4 MiB and more: a 268 MB buffer is then 134 TLB entries and page faults, not
// 65,536. Used by the cpu_clang plugin's buffers and the ccl_mpi plugin's scratch memory.
#ifndef POLYGRAD_HUGE_PAGES_HPP
#define POLYGRAD_HUGE_PAGES_HPP

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace polygrad::sdk {

/// The size of a huge page on x86-64 and the buffers from which they are worth asking for.
inline constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;
inline constexpr uint64_t kHugePagesFrom = uint64_t{4} << 20;

/// `bytes` of memory aligned to a huge page, advised MADV_HUGEPAGE (advice only: without
/// huge pages it works alike); free it with std::free. nullptr when out of memory.
inline void* huge_page_alloc(uint64_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kHugePageBytes, bytes > 0 ? bytes : 1) != 0) return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_HUGE_PAGES_HPP
