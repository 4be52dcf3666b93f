// cuda plugin internals: the pieces each .cpp file provides (driver.hpp and target.hpp hold
// the driver table and the architecture's capabilities).
#ifndef POLYGRAD_CUDA_PLUGIN_HPP
#define POLYGRAD_CUDA_PLUGIN_HPP

#include <polygrad/disk_cache.hpp>
#include <polygrad/plugin.hpp>

#include <memory>
#include <string>
#include <vector>

#include "target.hpp"

namespace polygrad::cuda {

/// The plugin's own version, part of every cache key.
inline constexpr const char* kVersion = "0.1.0";

// --- renderer.cpp ----------------------------------------------------------------------------

/// CUDA C++ source for a validated program: one extern "C" __global__ function named after it.
std::string render_cuda(const pg_kernel_program& program);

// --- compiler.cpp ----------------------------------------------------------------------------

/// A compiled kernel: the cubin for the exact architecture, and the PTX it came from (loaded
/// only when the driver refuses the cubin).
struct Binary {
  std::string cubin;
  std::string ptx;
};

/// NVRTC (source -> PTX) and nvJitLink (PTX -> cubin), behind an optional on-disk cache.
class Compiler {
 public:
  /// `cache_dir` empty: no cache. `driver_version` goes into every key (0 without a driver).
  Compiler(const sdk::Host& host, const std::string& cache_dir, int driver_version);
  /// Compiles CUDA `source` whose kernel is `entry` for `arch`; PG_ERR_COMPILE with the
  /// compiler's log on failure. Cached results are checked and reused.
  Binary compile(const std::string& source, const std::string& entry, const Arch& arch);
  /// "NVRTC 13.0, nvJitLink 13.0": what the cache keys name.
  static std::string versions();

 private:
  sdk::Host host_;
  std::unique_ptr<sdk::DiskCache> cache_;
  int driver_version_;
};

}  // namespace polygrad::cuda

#endif  // POLYGRAD_CUDA_PLUGIN_HPP
