// Loads the compiler library (compiler_library.hpp) from the plugin's own folder at the first
// compile, so that discovering the plugin never opens NVRTC or nvJitLink.
#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>
#include <polygrad/sibling_library.hpp>

#include <string>

#include "compiler_library.hpp"

namespace polygrad::cuda {
namespace {

// Any function of the plugin: dladdr on it names the plugin's file.
void plugin_anchor() {}

}  // namespace

std::string compiler_library_path() {
  return sdk::sibling_path(reinterpret_cast<const void*>(&plugin_anchor), kCompilerFile);
}

const CompilerApi& compiler_library() {
  static sdk::SiblingInterface<CompilerApi> lib(compiler_library_path(), kCompilerEntry,
                                                kCompilerInterface, "the cuda compiler's library");
  const CompilerApi* api = lib.api();
  if (api == nullptr) sdk::fail(PG_ERR_UNSUPPORTED, "cuda: compiler: " + lib.error());
  return *api;
}

}  // namespace polygrad::cuda
