// The two libraries the NCCL plugin runs on, both reached through dlopen at first use and
// never linked: the CUDA driver (libcuda.so.1, as the cuda plugin opens it) and NCCL
// (libnccl.so.2 of the CUDA toolkit). So the plugin loads everywhere and, where either is
// missing or there is no GPU, says why in one line. cuda.h and nccl.h give the types only.
#ifndef POLYGRAD_CCL_NCCL_LIBRARIES_HPP
#define POLYGRAD_CCL_NCCL_LIBRARIES_HPP

#include <cuda.h>
#include <nccl.h>

#include <string>

namespace polygrad::ccl_nccl {

// X(entry point as the driver exports it).
#define PG_NCCL_CUDA_FUNCTIONS(X) \
  X(cuInit)                       \
  X(cuGetErrorName)               \
  X(cuDeviceGetCount)             \
  X(cuDeviceGet)                  \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuCtxSetCurrent)              \
  X(cuStreamCreate)               \
  X(cuStreamDestroy_v2)           \
  X(cuStreamQuery)                \
  X(cuStreamSynchronize)          \
  X(cuMemAlloc_v2)                \
  X(cuMemFree_v2)                 \
  X(cuPointerGetAttribute)

// X(entry point of NCCL): those of NCCL 2.14 and later (nonblocking communicators).
#define PG_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)          \
  X(ncclGetErrorString)      \
  X(ncclGetLastError)        \
  X(ncclGetUniqueId)         \
  X(ncclCommInitRankConfig)  \
  X(ncclCommGetAsyncError)   \
  X(ncclCommAbort)           \
  X(ncclCommDestroy)         \
  X(ncclAllReduce)           \
  X(ncclBroadcast)           \
  X(ncclAllGather)           \
  X(ncclReduceScatter)

/// The entry points of both libraries, or the reason they cannot be used.
struct Libraries {
#define PG_X(name) decltype(&::name) name = nullptr;
  PG_NCCL_CUDA_FUNCTIONS(PG_X)
  PG_NCCL_FUNCTIONS(PG_X)
#undef PG_X
  int devices = 0;       ///< GPUs the driver sees
  int nccl_version = 0;  ///< ncclGetVersion: 10000 * major + 100 * minor + patch
  /// Empty when a communicator can be made; otherwise one line: why not.
  std::string unusable;

  /// "CUDA_ERROR_INVALID_VALUE (1)" for `r`.
  std::string describe(CUresult r) const;
  /// "ncclRemoteError (6): remote process exited or there was a network error" for `r`.
  std::string describe(ncclResult_t r) const;
};

/// The process's libraries, opened once (thread-safe). POLYGRAD_CUDA_DRIVER names another
/// driver library (as for the cuda plugin), POLYGRAD_NCCL_LIBRARY another NCCL.
const Libraries& libraries();

/// "2.28.9" for ncclGetVersion's code.
std::string nccl_version_text(int code);

}  // namespace polygrad::ccl_nccl

#endif  // POLYGRAD_CCL_NCCL_LIBRARIES_HPP
