// The interface between the cpu_clang plugin and its compiler library,
// libpolygrad_cpu_clang_compiler.so (clang_compile.cpp, linked with libclang-cpp). The plugin
// itself links LLVM (its ORC loader runs every kernel) but not clang: opening libclang-cpp costs
// 10-17 ms, which a process whose kernels are all in the object cache never needs.
// compiler_loader.cpp opens the library from the plugin's own folder at the first compile.
#ifndef POLYGRAD_CPU_CLANG_COMPILER_LIBRARY_HPP
#define POLYGRAD_CPU_CLANG_COMPILER_LIBRARY_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::cpu_clang {

/// The library's file, beside the plugin's (not named polygrad_*.so, so discovery passes it by).
inline constexpr const char* kCompilerFile = "libpolygrad_cpu_clang_compiler.so";
/// The one symbol that library exports, of type CompilerEntry.
inline constexpr const char* kCompilerEntry = "polygrad_cpu_clang_compiler";
/// Bumped whenever CompilerApi or CompileResult change: a library of another build is refused.
inline constexpr uint32_t kCompilerInterface = 1;

/// What one compile gives back. `status` is PG_OK, else a pg_status with `error` saying why.
struct CompileResult {
  int status = 0;
  std::string error;
  std::vector<char> object;  ///< a native relocatable object
};

/// The library's functions. Nothing is thrown across them.
struct CompilerApi {
  uint32_t interface;  ///< kCompilerInterface of the library's build
  /// Compiles C `source` with clang's cc1 arguments `args` (the last names the input,
  /// "kernel.c"); `entry` is the kernel's name, for messages.
  void (*compile)(const std::string& source, const std::vector<std::string>& args,
                  const std::string& entry, CompileResult& out);
};

/// The library's entry: its function table, or NULL with the reason in `error` when
/// `interface` (the caller's kCompilerInterface) is not its own.
using CompilerEntry = const CompilerApi* (*)(uint32_t interface, char* error, size_t error_size);

/// The library's path: kCompilerFile beside the plugin's file.
std::string compiler_library_path();

/// The loaded library's table (opened once per process, never closed); throws sdk::Error
/// (PG_ERR_UNSUPPORTED) naming the file and the reason when it cannot be loaded.
const CompilerApi& compiler_library();

}  // namespace polygrad::cpu_clang

#endif  // POLYGRAD_CPU_CLANG_COMPILER_LIBRARY_HPP
