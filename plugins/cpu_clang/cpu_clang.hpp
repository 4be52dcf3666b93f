// cpu_clang plugin internals: the pieces each .cpp file provides.
#ifndef POLYGRAD_CPU_CLANG_HPP
#define POLYGRAD_CPU_CLANG_HPP

#include <polygrad/disk_cache.hpp>
#include <polygrad/plugin.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace polygrad::cpu_clang {

/// The plugin's own version, part of every cache key.
inline constexpr const char* kVersion = POLYGRAD_CPU_CLANG_VERSION;

/// Signature of every rendered kernel: runs the grid rows gid0 in [begin, end) over the full
/// extent of dims 1 and 2. dims = {global0, global1, global2}.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars, int64_t begin, int64_t end,
                          const uint32_t* dims);

// --- host_cpu.cpp ----------------------------------------------------------------------------

/// What LLVM and /proc/cpuinfo say about the machine we run on. Cheap to query (cpuid).
struct HostCpu {
  std::string triple;                 ///< e.g. "x86_64-pc-linux-gnu"
  std::string cpu;                    ///< LLVM CPU name, e.g. "skylake-avx512"
  std::vector<std::string> features;  ///< "+avx2", "-avx512f", ... sorted
  std::string model_name;             ///< "Intel(R) Xeon(R) ..." from /proc/cpuinfo
  uint32_t vector_width_bytes = 16;   ///< 64 with avx512f, 32 with avx/avx2, else 16
  uint32_t hardware_threads = 1;
  uint64_t memory_bytes = 0;
  uint64_t l1d_bytes = 0;  ///< level-1 data cache of one core (0: unknown)
  uint64_t l2_bytes = 0;   ///< level-2 cache of one core (0: unknown)
  /// "x86_64-skylake-avx512": arch of the triple and the CPU name.
  std::string target() const;
};
const HostCpu& host_cpu();
/// What codegen may assume about this CPU when `threads` workers run its launches.
void fill_capabilities(pg_capabilities& caps, uint32_t threads);

// --- renderer.cpp ----------------------------------------------------------------------------

/// Render a validated program as C for this plugin's calling convention (KernelFn).
std::string render_c(const pg_kernel_program& program);
/// False for source render_c marked as compiled without the SLP vectorizer (a register-tiled
/// kernel, see renderer.cpp).
bool wants_slp(const std::string& source);
/// Every dtype the C dialect renders.
uint64_t c_dtype_mask();

// --- compiler.cpp ----------------------------------------------------------------------------

/// What a compile depends on besides the source; all of it goes into the cache key.
struct CompileOptions {
  int opt_level = 2;
  const HostCpu* cpu = nullptr;
};
/// Text naming the compiler and its flags for `cpu` (LLVM version included), for cache keys.
std::string compiler_identity(const HostCpu& cpu);
/// Compile C `source` to a native relocatable object in memory with clang's libraries.
/// Throws Error(PG_ERR_COMPILE) with the first diagnostics when it does not compile.
std::vector<char> compile_c(const std::string& source, const std::string& entry,
                            const CompileOptions& options);
/// Initialise LLVM's native target once per process (compiler and JIT both need it).
void ensure_llvm_initialized();

// --- cache.cpp -------------------------------------------------------------------------------

/// The on-disk object cache (sdk::DiskCache: one checked file per key, written atomically).
std::unique_ptr<sdk::DiskCache> make_object_cache(const std::string& directory,
                                                  const sdk::Host& host);
/// SHA-256 over everything an object depends on: source, entry, options, compiler, CPU.
sdk::DiskCache::Key cache_key(const std::string& source, const std::string& entry,
                              const CompileOptions& options);
/// The default cache directory: $XDG_CACHE_HOME/polygrad/cpu_clang or
/// ~/.cache/polygrad/cpu_clang.
std::string default_cache_dir();

// --- loader.cpp ------------------------------------------------------------------------------

/// One LLVM ORC JIT per device, created on first use or in the background; each program gets
/// its own JITDylib.
class Jit {
 public:
  Jit();
  ~Jit();
  /// Link `object` and return the address of `entry`. Throws Error(PG_ERR_COMPILE).
  KernelFn load(const std::vector<char>& object, const std::string& entry, void** handle);
  /// Release what load() returned in `handle`.
  void unload(void* handle);
  /// Creates the JIT on a thread of its own now rather than in the first load (about 1.3 ms
  /// of the first call of a process whose kernels come from the disk cache).
  void create_in_background();

 private:
  void create();
  /// Waits for every JIT being created in the background (loader.cpp).
  static void wait_for_creations();

  struct State;
  std::unique_ptr<State> state_;
  std::once_flag created_;
};

// --- allocator.cpp ---------------------------------------------------------------------------

/// A host-memory buffer: 64-byte aligned, at least 64 bytes allocated so that every handle is
/// unique even for nbytes = 0.
struct Buffer {
  void* data = nullptr;
  uint64_t size = 0;
  bool owned = true;  ///< false: the host's memory (wrap_host), not freed with the handle
};
inline constexpr uint32_t kAlignment = 64;
Buffer* buffer_alloc(uint64_t nbytes);
/// A handle over host memory aligned to kAlignment bytes, like the cpu's own buffers;
/// Error(UNSUPPORTED) otherwise (the host then copies).
Buffer* buffer_wrap(void* host, uint64_t nbytes);
void buffer_free(Buffer* buffer);
/// Throws Error(PG_ERR_INVALID_ARGUMENT) naming `what` when [offset, offset + n) is not inside.
void check_range(const Buffer& buffer, uint64_t offset, uint64_t n, const char* what);

}  // namespace polygrad::cpu_clang

#endif  // POLYGRAD_CPU_CLANG_HPP
