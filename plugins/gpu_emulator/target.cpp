#include "target.hpp"

#include <array>

#include "program.hpp"

namespace polygrad::gpu_emu {

namespace {

// The fragments of mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32, for lane
// (thread in the warp) t, with group = t >> 2 and tq = t % 4 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"):
//   A (16 x 16, 8 per thread): a0,a1 (group, 2tq + {0,1}); a2,a3 (group + 8, 2tq + {0,1});
//                              a4,a5 (group, 2tq + 8 + {0,1}); a6,a7 (group + 8, 2tq + 8 + {0,1})
//   B (16 x 8, 4 per thread):  b0,b1 (k = 2tq + {0,1}, n = group); b2,b3 (k = 2tq + 8 + {0,1})
//   C, D (16 x 8, 4 per thread): c0,c1 (group, 2tq + {0,1}); c2,c3 (group + 8, 2tq + {0,1})
// Entry [t * lanes + l] of a map is row * cols + col of the element lane l of thread t holds.
using Map = std::array<uint16_t, 256>;

constexpr Map a_map() {
  Map m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 8; ++l) {
      const uint32_t row = (t >> 2) + 8 * ((l >> 1) & 1),
                     col = 2 * (t % 4) + (l & 1) + 8 * (l >> 2);
      m[t * 8 + l] = static_cast<uint16_t>(row * 16 + col);
    }
  return m;
}

constexpr Map b_map() {
  Map m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 4; ++l) {
      const uint32_t k = 2 * (t % 4) + (l & 1) + 8 * (l >> 1), n = t >> 2;
      m[t * 4 + l] = static_cast<uint16_t>(k * 8 + n);
    }
  return m;
}

constexpr Map c_map() {
  Map m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 4; ++l) {
      const uint32_t row = (t >> 2) + 8 * (l >> 1), col = 2 * (t % 4) + (l & 1);
      m[t * 4 + l] = static_cast<uint16_t>(row * 8 + col);
    }
  return m;
}

// Static data, valid until the process ends (plugin.h); the C/D map covers 128 entries.
constexpr Map kAMap = a_map(), kBMap = b_map(), kCMap = c_map();

constexpr pg_tensor_core mma_m16n8k16(pg_dtype input) {
  return {16,
          8,
          16,
          kWarpSize,
          static_cast<uint8_t>(input),
          static_cast<uint8_t>(input),
          PG_DTYPE_FLOAT32,
          0,
          0,
          kAMap.data(),
          kBMap.data(),
          kCMap.data()};
}

constexpr pg_tensor_core kTensorCores[kTensorCoreCount] = {mma_m16n8k16(PG_DTYPE_FLOAT16),
                                                           mma_m16n8k16(PG_DTYPE_BFLOAT16)};

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
