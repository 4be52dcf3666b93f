// polygrad plugin SDK: a library of a plugin's own, beside it in its folder, opened when first
// needed. A plugin keeps what is costly to open (a compiler, a JavaScript engine) out of its
// own file, so that discovering it at start-up opens nothing heavy: the cpu_clang plugin's
// clang, the cuda plugin's NVRTC and nvJitLink, the wasm plugin's V8. The library exports one
// entry, which the plugin looks up here and calls with its interface version.
#ifndef POLYGRAD_SIBLING_LIBRARY_HPP
#define POLYGRAD_SIBLING_LIBRARY_HPP

#include <dlfcn.h>

#include <string>

namespace polygrad::sdk {

/// The path of `file` in the folder of the shared object that holds `anchor` (the address of
/// any function of the plugin); `file` alone (the loader's search path) when that object
/// cannot be named.
inline std::string sibling_path(const void* anchor, const char* file) {
  Dl_info info{};
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return file;
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + file;
}

/// Opens the library at `path` (RTLD_NOW | RTLD_LOCAL; never closed: what it starts, threads
/// or signal handlers, may outlive any one use) and returns its symbol `entry`, or NULL with
/// the reason in `error`: "cannot load PATH: ..." (dlopen's), or "PATH has no ENTRY (not
/// WHAT)" for a file that is some other library.
inline void* open_sibling_entry(const std::string& path, const char* entry, const char* what,
                                std::string& error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    const std::string why = reason ? reason : "dlopen failed";
    // (dlerror names the file first, "PATH: file too short", when the file itself is at fault)
    error = "cannot load " + (why.rfind(path, 0) == 0 ? why : path + ": " + why);
    return nullptr;
  }
  void* symbol = dlsym(handle, entry);
  if (symbol == nullptr) error = path + " has no " + entry + " (not " + what + ")";
  return symbol;
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_SIBLING_LIBRARY_HPP
