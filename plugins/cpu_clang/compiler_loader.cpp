// Loads the compiler library (compiler_library.hpp) from the plugin's own folder at the first
// compile, so that a process whose kernels all come from the object cache never opens
// libclang-cpp.
#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>
#include <polygrad/sibling_library.hpp>

#include <mutex>
#include <string>

#include "compiler_library.hpp"

namespace polygrad::cpu_clang {
namespace {

// Any function of the plugin: dladdr on it names the plugin's file.
void plugin_anchor() {}

struct Library {
  const CompilerApi* api = nullptr;
  std::string error;  ///< why it could not be loaded, when api is NULL
};

const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = compiler_library_path();
    auto entry = reinterpret_cast<CompilerEntry>(sdk::open_sibling_entry(
        path, kCompilerEntry, "the cpu_clang compiler's library", lib.error));
    if (entry == nullptr) return;
    char error[512] = "";
    lib.api = entry(kCompilerInterface, error, sizeof error);
    if (lib.api == nullptr) lib.error = error[0] ? error : path + " refused the plugin";
  });
  return lib;
}

}  // namespace

std::string compiler_library_path() {
  return sdk::sibling_path(reinterpret_cast<const void*>(&plugin_anchor), kCompilerFile);
}

const CompilerApi& compiler_library() {
  const Library& lib = library();
  if (lib.api == nullptr) sdk::fail(PG_ERR_UNSUPPORTED, "cpu: compiler: " + lib.error);
  return *lib.api;
}

}  // namespace polygrad::cpu_clang
