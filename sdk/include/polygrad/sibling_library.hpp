// polygrad plugin SDK: a library of a plugin's own, beside it in its folder, opened when first
// needed. A plugin keeps what is costly to open (a compiler, a JavaScript engine) out of its
// own file, so that discovering it at start-up opens nothing heavy: the cpu_clang plugin's
// clang, the cuda plugin's NVRTC and nvJitLink, the wasm plugin's V8. The library exports one
// entry, which the plugin looks up here and calls with its interface version.
#ifndef POLYGRAD_SIBLING_LIBRARY_HPP
#define POLYGRAD_SIBLING_LIBRARY_HPP

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

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

/// A sibling library whose entry hands out its interface:
/// `const Api* entry(uint32_t interface, char* error, size_t error_size)`, NULL with the reason
/// when `interface` (the plugin's build of it) is not the library's. Opened and asked once, at
/// the first api() call, from whichever thread comes first.
template <typename Api>
class SiblingInterface {
 public:
  using Entry = const Api* (*)(uint32_t interface, char* error, size_t error_size);

  /// `what` names the library in the error for a file that is some other library.
  SiblingInterface(std::string path, const char* entry, uint32_t interface, const char* what)
      : path_(std::move(path)), entry_(entry), what_(what), interface_(interface) {}

  /// The interface, or NULL with the reason in error().
  const Api* api() {
    std::call_once(once_, [this] {
      auto entry = reinterpret_cast<Entry>(open_sibling_entry(path_, entry_, what_, error_));
      if (entry == nullptr) return;
      char error[512] = "";
      api_ = entry(interface_, error, sizeof error);
      if (api_ == nullptr) error_ = error[0] ? error : path_ + " refused the plugin";
    });
    return api_;
  }
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  const char* entry_;
  const char* what_;
  uint32_t interface_;
  std::once_flag once_;
  const Api* api_ = nullptr;
  std::string error_;
};

}  // namespace polygrad::sdk

#endif  // POLYGRAD_SIBLING_LIBRARY_HPP
