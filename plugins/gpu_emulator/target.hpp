// The device the emulator presents: a GPU-like target with groups of up to 1024 threads,
// 48 KiB of local memory per group, 32-thread warps, 16-byte aligned vector accesses and two
// tensor-core shapes (those of PTX mma.sync m16n8k16 with f16 or bf16 inputs and f32
// accumulators), in memory the host cannot address.
#ifndef POLYGRAD_GPU_EMU_TARGET_HPP
#define POLYGRAD_GPU_EMU_TARGET_HPP

#include <polygrad/plugin.h>

#include <cstdint>

namespace polygrad::gpu_emu {

/// The architecture string of the one target (pg_device_properties.target, pg_target.arch).
constexpr const char* kArch = "gpu_emu";
constexpr uint32_t kWarpSize = 32;
constexpr uint32_t kMaxThreadsPerGroup = 1024;
constexpr uint32_t kMaxLocalDims[3] = {1024, 1024, 64};
constexpr uint32_t kMaxGlobalDims[3] = {2147483647u, 65535, 65535};
constexpr uint64_t kLocalMemoryBytes = 49152;
constexpr uint64_t kMaxAllocationBytes = uint64_t{4} << 30;
constexpr uint32_t kTensorCoreCount = 2;

/// Tensor core `index` (< kTensorCoreCount): 0 is f16 x f16 + f32, 1 is bf16 x bf16 + f32,
/// both m16n8k16 over a warp with the element maps of mma.sync.aligned.m16n8k16.row.col.
const pg_tensor_core& tensor_core(uint32_t index);

/// The capabilities of the target whose launches run on `workers` host threads.
void fill_capabilities(pg_capabilities& caps, uint32_t workers);

/// Whether the emulator runs `op` on `dtype` in `vcount` lanes (pg_compiler_api.op_support).
bool op_supported(uint32_t op, uint32_t dtype, uint32_t vcount);

/// Whether ATOMIC_ADD takes `dtype`: 32- and 64-bit ints and floats.
bool atomic_dtype(uint32_t dtype);

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_TARGET_HPP
