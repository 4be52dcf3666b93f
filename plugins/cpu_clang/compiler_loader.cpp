// Loads the compiler library (compiler_library.hpp) from the plugin's own folder at the first
// compile, so that a process whose kernels all come from the object cache never opens
// libclang-cpp.
#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>
#include <polygrad/sibling_library.hpp>

#include <string>

#include "compiler_library.hpp"

namespace polygrad::cpu_clang {
namespace {

// Any function of the plugin: dladdr on it names the plugin's file.
void plugin_anchor() {}

}  // namespace

std::string compiler_library_path() {
  return sdk::sibling_path(reinterpret_cast<const void*>(&plugin_anchor), kCompilerFile);
}

const CompilerApi& compiler_library() {
  static sdk::SiblingInterface<CompilerApi> lib(compiler_library_path(), kCompilerEntry,
                                                kCompilerInterface,
                                                "the cpu_clang compiler's library");
  const CompilerApi* api = lib.api();
  if (api == nullptr) sdk::fail(PG_ERR_UNSUPPORTED, "cpu: compiler: " + lib.error());
  return *api;
}

}  // namespace polygrad::cpu_clang
