// What the codegen may assume about an NVIDIA GPU of a given architecture, with or without
// the GPU itself: the compile-only target (sm_90 by default) and each device's target share it.
#ifndef POLYGRAD_CUDA_TARGET_HPP
#define POLYGRAD_CUDA_TARGET_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <string>

namespace polygrad::cuda {

/// The architecture compile-only work targets when none is named: Hopper (H100, H200).
constexpr const char* kDefaultArch = "sm_90";
/// The oldest architecture CUDA 13 compiles for.
constexpr int kMinArch = 75;

/// An architecture: "sm_90" is {9, 0, false}; "sm_90a" sets `arch_specific`.
struct Arch {
  int major = 9, minor = 0;
  bool arch_specific = false;
  int number() const { return 10 * major + minor; }
  std::string name() const;  ///< "sm_90", "sm_90a"
  std::string ptx() const;   ///< "compute_90", "compute_90a"
};

/// Parses "sm_XY" / "sm_XYa" ("" = kDefaultArch); PG_ERR_UNSUPPORTED naming it otherwise or
/// below kMinArch.
Arch parse_arch(const std::string& text);

/// Measured properties of a device that refine the architecture's defaults (0 = unknown).
struct DeviceFacts {
  uint32_t sm_count = 0;
  uint64_t l2_bytes = 0;
  uint64_t memory_bytes = 0;
};

/// The capabilities of `arch` (with `facts` where known): 1024-thread groups, 48 KiB of
/// static shared memory, 32-thread warps, 16-byte aligned vector accesses, atomics, 32-bit
/// indices, and mma.sync m16n8k16 f16/bf16 tensor cores from sm_80 on.
void fill_capabilities(pg_capabilities& caps, const Arch& arch, const DeviceFacts& facts);

/// Whether the CUDA dialect renders `op` on `dtype` in `vcount` lanes for `arch`.
bool op_supported(const Arch& arch, uint32_t op, uint32_t dtype, uint32_t vcount);

}  // namespace polygrad::cuda

#endif  // POLYGRAD_CUDA_TARGET_HPP
