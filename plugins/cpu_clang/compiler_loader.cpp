// Loads the compiler library (compiler_library.hpp) from the plugin's own folder at the first
// compile, so that a process whose kernels all come from the object cache never opens
// libclang-cpp.
#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>

#include <dlfcn.h>

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
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = dlerror();
      const std::string why = reason ? reason : "dlopen failed";
      // (dlerror names the file first, "PATH: file too short", when the file itself is at fault)
      lib.error = "cannot load " + (why.rfind(path, 0) == 0 ? why : path + ": " + why);
      return;
    }
    auto entry = reinterpret_cast<CompilerEntry>(dlsym(handle, kCompilerEntry));
    if (entry == nullptr) {
      lib.error = path + " has no " + kCompilerEntry + " (not the cpu_clang compiler's library)";
      return;
    }
    char error[512] = "";
    lib.api = entry(kCompilerInterface, error, sizeof error);
    if (lib.api == nullptr) lib.error = error[0] ? error : path + " refused the plugin";
  });
  return lib;
}

}  // namespace

std::string compiler_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_anchor), &info) == 0 || info.dli_fname == nullptr)
    return kCompilerFile;  // not found by its folder: the loader's search path
  std::string self = info.dli_fname;
  size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + kCompilerFile;
}

const CompilerApi& compiler_library() {
  const Library& lib = library();
  if (lib.api == nullptr) sdk::fail(PG_ERR_UNSUPPORTED, "cpu: compiler: " + lib.error);
  return *lib.api;
}

}  // namespace polygrad::cpu_clang
