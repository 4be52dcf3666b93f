#include "target.hpp"

#include <polygrad/ptx_mma.hpp>

#include "program.hpp"

namespace polygrad::gpu_emu {

namespace {

// The shapes of PTX mma.sync m16n8k16 (polygrad/ptx_mma.hpp), whose semantics wmma.cpp runs.
constexpr pg_tensor_core kTensorCores[kTensorCoreCount] = {
    sdk::ptx::mma_m16n8k16(PG_DTYPE_FLOAT16), sdk::ptx::mma_m16n8k16(PG_DTYPE_BFLOAT16)};

}  // namespace

const pg_tensor_core& tensor_core(uint32_t index) {
  return kTensorCores[index];
}

void fill_capabilities(pg_capabilities& c, uint32_t workers) {
  c.flags = PG_CAP_GROUPS | PG_CAP_LOCAL_MEMORY | PG_CAP_ALIGNED_VECTORS | PG_CAP_ATOMIC_ADD;
  for (uint32_t dt = PG_DTYPE_BOOL; dt < PG_DTYPE_COUNT; ++dt) c.dtype_mask |= uint64_t{1} << dt;
  c.vector_width_bytes = 16;
  c.max_vector_lanes = kMaxLanes;
  c.max_threads_per_group = kMaxThreadsPerGroup;
  for (int d = 0; d < 3; ++d) {
    c.max_local_dims[d] = kMaxLocalDims[d];
    c.max_global_dims[d] = kMaxGlobalDims[d];
  }
  c.compute_units = workers;
  c.local_memory_bytes = kLocalMemoryBytes;
  c.l1_cache_bytes = 0;  // unknown: an emulator has no cache worth planning for
  c.l2_cache_bytes = 0;
  c.subgroup_size = kWarpSize;
  c.index_bits = 32;
  c.max_allocation_bytes = kMaxAllocationBytes;
  c.tensor_core_count = kTensorCoreCount;
  for (uint32_t i = 0; i < kTensorCoreCount; ++i) c.tensor_cores[i] = kTensorCores[i];
}

bool atomic_dtype(uint32_t dtype) {
  return dtype == PG_DTYPE_INT32 || dtype == PG_DTYPE_UINT32 || dtype == PG_DTYPE_INT64 ||
         dtype == PG_DTYPE_UINT64 || dtype == PG_DTYPE_FLOAT32 || dtype == PG_DTYPE_FLOAT64;
}

bool op_supported(uint32_t op, uint32_t dtype, uint32_t vcount) {
  if (op >= PG_OP_COUNT || dtype >= PG_DTYPE_COUNT) return false;
  if (op == PG_OP_ATOMIC_ADD) return vcount == 1 && atomic_dtype(dtype);
  if (op == PG_OP_WMMA) {  // its dtype and lanes are those of the accumulator fragment
    for (const pg_tensor_core& tc : kTensorCores)
      if (dtype == tc.dtype_c && vcount == uint32_t{tc.m} * tc.n / tc.threads) return true;
    return false;
  }
  return vcount >= 1 && vcount <= kMaxLanes;
}

}  // namespace polygrad::gpu_emu
