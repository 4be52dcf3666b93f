// The interface between the cuda plugin and its compiler library, libpolygrad_cuda_compiler.so
// (nvrtc_compile.cpp, linked with NVRTC and nvJitLink). The plugin itself does not link them:
// opening both costs about 30 ms, which every process that discovers plugins would otherwise
// pay, GPU or not. compiler_loader.cpp opens the library from the plugin's own folder at the
// first compile.
#ifndef POLYGRAD_CUDA_COMPILER_LIBRARY_HPP
#define POLYGRAD_CUDA_COMPILER_LIBRARY_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace polygrad::cuda {

/// The library's file, beside the plugin's (not named polygrad_*.so, so discovery passes it by).
inline constexpr const char* kCompilerFile = "libpolygrad_cuda_compiler.so";
/// The one symbol that library exports, of type CompilerEntry.
inline constexpr const char* kCompilerEntry = "polygrad_cuda_compiler";
/// Bumped whenever CompilerApi or CompileResult change: a library of another build is refused.
inline constexpr uint32_t kCompilerInterface = 1;

/// What one compile gives back. `status` is PG_OK, else a pg_status with `error` saying why.
struct CompileResult {
  int status = 0;
  std::string error;
  std::string cubin;    ///< for the exact sm_XY
  std::string ptx;      ///< the virtual architecture's PTX the cubin came from
  uint64_t spills = 0;  ///< bytes of spill stores ptxas reports
};

/// The library's functions. Nothing is thrown across them.
struct CompilerApi {
  uint32_t interface;  ///< kCompilerInterface of the library's build
  /// "NVRTC 13.0, nvJitLink 13.0": what the cache keys name.
  void (*versions)(std::string& out);
  /// The options NVRTC then nvJitLink run with, each followed by a space ("--std=c++17 ...
  /// -O3 ... "): part of cache keys.
  void (*options)(std::string& out);
  /// NVRTC (`source` to PTX for `arch_ptx`, "compute_90") then nvJitLink (to a cubin for
  /// `arch_name`, "sm_90"); `entry` is the kernel's name.
  void (*compile)(const std::string& source, const std::string& entry, const std::string& arch_name,
                  const std::string& arch_ptx, CompileResult& out);
};

/// The library's entry: its function table, or NULL with the reason in `error` when
/// `interface` (the caller's kCompilerInterface) is not its own.
using CompilerEntry = const CompilerApi* (*)(uint32_t interface, char* error, size_t error_size);

/// The library's path: kCompilerFile beside the plugin's file.
std::string compiler_library_path();

/// The loaded library's table (opened once per process, never closed); throws sdk::Error
/// (PG_ERR_UNSUPPORTED) naming the file and the reason when it cannot be loaded.
const CompilerApi& compiler_library();

}  // namespace polygrad::cuda

#endif  // POLYGRAD_CUDA_COMPILER_LIBRARY_HPP
