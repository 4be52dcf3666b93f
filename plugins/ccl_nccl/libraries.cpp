#include "libraries.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace polygrad::ccl_nccl {

namespace {

/// dlopen `name`, else `fallback` (the toolkit's copy found at build time); the error of the
/// first attempt when both fail.
void* open_library(const char* name, const char* fallback, std::string& why) {
  void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) return lib;
  const char* e = ::dlerror();
  why = e ? e : "unknown error";
  if (fallback != nullptr && fallback[0] != '\0') lib = ::dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
  return lib;
}

const char* env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return v != nullptr && v[0] != '\0' ? v : fallback;
}

void open_driver(Libraries& l) {
  const char* name = env_or("POLYGRAD_CUDA_DRIVER", "libcuda.so.1");
  std::string why;
  void* lib = open_library(name, nullptr, why);
  if (lib == nullptr) {
    l.unusable = std::string("no CUDA driver: cannot open ") + name + " (" + why + ")";
    return;
  }
#define PG_X(fn)                                                                           \
  l.fn = reinterpret_cast<decltype(l.fn)>(::dlsym(lib, #fn));                              \
  if (l.fn == nullptr) {                                                                   \
    l.unusable = std::string("the CUDA driver ") + name + " has no " + #fn + " (too old)"; \
    return;                                                                                \
  }
  PG_NCCL_CUDA_FUNCTIONS(PG_X)
#undef PG_X
  if (CUresult r = l.cuInit(0); r != CUDA_SUCCESS) {
    l.unusable = "no CUDA device: cuInit failed: " + l.describe(r);
    return;
  }
  if (CUresult r = l.cuDeviceGetCount(&l.devices); r != CUDA_SUCCESS) {
    l.unusable = "no CUDA device: cuDeviceGetCount failed: " + l.describe(r);
    l.devices = 0;
    return;
  }
  if (l.devices == 0) l.unusable = "no CUDA device: the CUDA driver sees no GPU";
}

void open_nccl(Libraries& l) {
  const char* env = std::getenv("POLYGRAD_NCCL_LIBRARY");
  const bool named = env != nullptr && env[0] != '\0';
  const char* name = named ? env : "libnccl.so.2";
  // The toolkit's copy only in place of the default name, never of the one the user named.
  std::string why;
  void* lib = open_library(name, named ? nullptr : POLYGRAD_NCCL_TOOLKIT_LIBRARY, why);
  if (lib == nullptr) {
    l.unusable = std::string("no NCCL: cannot open ") + name + " (" + why + ")";
    return;
  }
#define PG_X(fn)                                                    \
  l.fn = reinterpret_cast<decltype(l.fn)>(::dlsym(lib, #fn));       \
  if (l.fn == nullptr) {                                            \
    l.unusable = std::string("NCCL (") + name + ") has no " + #fn + \
                 " (NCCL 2.14 or newer "                            \
                 "is needed)";                                      \
    return;                                                         \
  }
  PG_NCCL_FUNCTIONS(PG_X)
#undef PG_X
  if (ncclResult_t r = l.ncclGetVersion(&l.nccl_version); r != ncclSuccess)
    l.unusable = "ncclGetVersion failed: " + l.describe(r);
}

}  // namespace

std::string Libraries::describe(CUresult r) const {
  const char* name = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  // The toolkit's stub driver names nothing; these are the errors it and a bare machine give.
  if (name == nullptr) {
    switch (r) {
      case CUDA_ERROR_STUB_LIBRARY:
        name = "CUDA_ERROR_STUB_LIBRARY";
        break;
      case CUDA_ERROR_NO_DEVICE:
        name = "CUDA_ERROR_NO_DEVICE";
        break;
      case CUDA_ERROR_NOT_INITIALIZED:
        name = "CUDA_ERROR_NOT_INITIALIZED";
        break;
      default:
        name = "CUDA error";
    }
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

std::string Libraries::describe(ncclResult_t r) const {
  const char* text = ncclGetErrorString != nullptr ? ncclGetErrorString(r) : nullptr;
  static const char* const kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  const int i = static_cast<int>(r);
  std::string out = i >= 0 && i < 8 ? kNames[i] : "ncclResult";
  out += " (" + std::to_string(i) + ")";
  if (text != nullptr) out += std::string(": ") + text;
  return out;
}

const Libraries& libraries() {
  static Libraries* l = [] {
    auto* out = new Libraries;  // never freed: the libraries outlive every communicator
    // NCCL first: its absence is the plugin's own problem, whatever the machine has.
    open_nccl(*out);
    if (out->unusable.empty()) open_driver(*out);
    return out;
  }();
  return *l;
}

std::string nccl_version_text(int code) {
  if (code <= 0) return "?";
  // NCCL_VERSION: 1000 * major + 100 * minor + patch up to 2.8, 10000 * major + ... after.
  if (code < 10000)
    return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 100) + "." +
           std::to_string(code % 100);
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." +
         std::to_string(code % 100);
}

}  // namespace polygrad::ccl_nccl
