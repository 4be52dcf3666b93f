#include "driver.hpp"

#include <dlfcn.h>

#include <polygrad/plugin_error.hpp>

#include <cstdlib>
#include <mutex>

namespace polygrad::cuda {

namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

void open_driver(Driver& d) {
  const char* name = std::getenv("POLYGRAD_CUDA_DRIVER");
  if (name == nullptr || name[0] == '\0') name = "libcuda.so.1";
  void* lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    d.unusable = std::string("no CUDA driver: cannot open ") + name + " (" +
                 (why ? why : "unknown error") + ")";
    return;
  }
#define PG_X(fn)                                                             \
  d.fn = reinterpret_cast<decltype(d.fn)>(::dlsym(lib, #fn));                \
  if (d.fn == nullptr) {                                                     \
    d.unusable = std::string("the CUDA driver ") + name + " has no " + #fn + \
                 " (too old for this plugin, which needs CUDA " +            \
                 version_text(kMinDriverVersion) + " or newer)";             \
    return;                                                                  \
  }
  PG_CUDA_DRIVER_FUNCTIONS(PG_X)
#undef PG_X
  // The library stays loaded for the life of the process, as the plugin does.
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    d.unusable = "cuInit failed: " + d.describe(r);
    return;
  }
  if (CUresult r = d.cuDriverGetVersion(&d.version); r != CUDA_SUCCESS) {
    d.unusable = "cuDriverGetVersion failed: " + d.describe(r);
    return;
  }
  if (d.version < kMinDriverVersion) {
    d.unusable = "the CUDA driver supports CUDA " + version_text(d.version) +
                 "; this plugin needs CUDA " + version_text(kMinDriverVersion) +
                 " or newer (update the NVIDIA driver)";
    return;
  }
  if (CUresult r = d.cuDeviceGetCount(&d.devices); r != CUDA_SUCCESS) {
    d.unusable = "cuDeviceGetCount failed: " + d.describe(r);
    d.devices = 0;
    return;
  }
  if (d.devices == 0)
    d.unusable = "the CUDA driver (CUDA " + version_text(d.version) + ") sees no GPU";
}

// The names of the errors a driver reports at start, for drivers (the toolkit's stub) whose
// cuGetErrorName answers nothing.
const char* known_name(CUresult r) {
  switch (r) {
    case CUDA_ERROR_INVALID_VALUE:
      return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case CUDA_ERROR_UNKNOWN:
      return "CUDA_ERROR_UNKNOWN";
    default:
      return nullptr;
  }
}

}  // namespace

std::string Driver::describe(CUresult status) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(status, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(status, &text) != CUDA_SUCCESS)
    text = nullptr;
  if (name == nullptr) name = known_name(status);
  std::string out = name ? name : "CUDA error";
  out += " (" + std::to_string(static_cast<int>(status)) + ")";
  if (text != nullptr) out += std::string(": ") + text;
  return out;
}

const Driver& driver() {
  static Driver* d = [] {
    auto* out = new Driver;  // never freed: the driver outlives every device
    open_driver(*out);
    return out;
  }();
  return *d;
}

void check(CUresult result, const std::string& what, pg_status status_if_failed) {
  if (result == CUDA_SUCCESS) return;
  const pg_status status =
      result == CUDA_ERROR_OUT_OF_MEMORY ? PG_ERR_OUT_OF_MEMORY : status_if_failed;
  sdk::fail(status, what + ": " + driver().describe(result));
}

}  // namespace polygrad::cuda
