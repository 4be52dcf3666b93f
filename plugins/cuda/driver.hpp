// The CUDA driver API, reached through dlopen("libcuda.so.1") at first use: the plugin never
// links the driver, so it loads (with zero devices and a one-line reason) on a machine with no
// driver, a stub driver, no GPU or a driver too old for the toolkit it was built with.
// cuda.h gives the types and constants only.
#ifndef POLYGRAD_CUDA_DRIVER_HPP
#define POLYGRAD_CUDA_DRIVER_HPP

#include <cuda.h>
#include <polygrad/plugin.h>

#include <string>

namespace polygrad::cuda {

/// The oldest driver the plugin takes: CUDA 13.0 (r580), the toolkit it compiles with.
constexpr int kMinDriverVersion = 13000;

// X(entry point as the driver exports it). The _v2 names are those cuda.h maps the plain names
// to; a driver that lacks one is refused at start with its name.
#define PG_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuInit)                         \
  X(cuDriverGetVersion)             \
  X(cuGetErrorName)                 \
  X(cuGetErrorString)               \
  X(cuDeviceGetCount)               \
  X(cuDeviceGet)                    \
  X(cuDeviceGetName)                \
  X(cuDeviceGetAttribute)           \
  X(cuDeviceTotalMem_v2)            \
  X(cuDevicePrimaryCtxRetain)       \
  X(cuDevicePrimaryCtxRelease_v2)   \
  X(cuCtxSetCurrent)                \
  X(cuCtxSynchronize)               \
  X(cuMemAlloc_v2)                  \
  X(cuMemFree_v2)                   \
  X(cuMemGetInfo_v2)                \
  X(cuMemHostAlloc)                 \
  X(cuMemFreeHost)                  \
  X(cuMemcpyHtoDAsync_v2)           \
  X(cuMemcpyDtoHAsync_v2)           \
  X(cuMemcpyDtoDAsync_v2)           \
  X(cuMemcpyPeerAsync)              \
  X(cuStreamCreate)                 \
  X(cuStreamDestroy_v2)             \
  X(cuStreamSynchronize)            \
  X(cuStreamWaitEvent)              \
  X(cuEventCreate)                  \
  X(cuEventDestroy_v2)              \
  X(cuEventRecord)                  \
  X(cuEventSynchronize)             \
  X(cuEventElapsedTime)             \
  X(cuModuleLoadDataEx)             \
  X(cuModuleUnload)                 \
  X(cuModuleGetFunction)            \
  X(cuFuncSetAttribute)             \
  X(cuLaunchKernel)

/// The driver's entry points, or the reason there are none.
struct Driver {
#define PG_X(name) decltype(&::name) name = nullptr;
  PG_CUDA_DRIVER_FUNCTIONS(PG_X)
#undef PG_X
  int version = 0;  ///< cuDriverGetVersion: 1000 * major + 10 * minor
  int devices = 0;  ///< cuDeviceGetCount after cuInit
  /// Empty when the driver is usable; otherwise one line: why there are no devices.
  std::string unusable;

  /// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" for `status`.
  std::string describe(CUresult status) const;
};

/// The process's driver, opened and initialised once (thread-safe). POLYGRAD_CUDA_DRIVER names
/// another library to open in place of libcuda.so.1 (tests point it at a stub).
const Driver& driver();

/// Throws sdk::Error(status) with "<what>: <describe(result)>" unless result is CUDA_SUCCESS.
/// CUDA_ERROR_OUT_OF_MEMORY becomes PG_ERR_OUT_OF_MEMORY.
void check(CUresult result, const std::string& what, pg_status status_if_failed = PG_ERR_DEVICE);

}  // namespace polygrad::cuda

#endif  // POLYGRAD_CUDA_DRIVER_HPP
