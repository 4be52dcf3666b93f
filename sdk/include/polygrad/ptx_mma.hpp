// polygrad plugin SDK: the tensor-core shapes of PTX mma.sync (header-only).
//
// A plugin for an NVIDIA GPU, or one that runs programs with the same semantics (gpu_emu),
// lists these shapes in pg_capabilities.tensor_cores. The element maps are those of
// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (PTX ISA, "Matrix Fragments
// for mma.m16n8k16 with floating point type"), for lane t of the warp, group = t >> 2 and
// tq = t % 4:
//   A (16 x 16, 8 per thread): a0,a1 (group, 2tq + {0,1}); a2,a3 (group + 8, 2tq + {0,1});
//                              a4,a5 (group, 2tq + 8 + {0,1}); a6,a7 (group + 8, 2tq + 8 + {0,1})
//   B (16 x 8, 4 per thread):  b0,b1 (k = 2tq + {0,1}, n = group); b2,b3 (k = 2tq + 8 + {0,1})
//   C, D (16 x 8, 4 per thread): c0,c1 (group, 2tq + {0,1}); c2,c3 (group + 8, 2tq + {0,1})
// Entry [t * lanes + l] of a map is row * cols + col of the element lane l of thread t holds.
#ifndef POLYGRAD_PTX_MMA_HPP
#define POLYGRAD_PTX_MMA_HPP

#include <polygrad/plugin.h>

#include <array>
#include <cstdint>

namespace polygrad::sdk::ptx {

/// Threads of a warp: the threads one mma.sync runs on.
inline constexpr uint32_t kWarpSize = 32;

using FragmentMap = std::array<uint16_t, 256>;

constexpr FragmentMap m16n8k16_a_map() {
  FragmentMap m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 8; ++l) {
      const uint32_t row = (t >> 2) + 8 * ((l >> 1) & 1),
                     col = 2 * (t % 4) + (l & 1) + 8 * (l >> 2);
      m[t * 8 + l] = static_cast<uint16_t>(row * 16 + col);
    }
  return m;
}

constexpr FragmentMap m16n8k16_b_map() {
  FragmentMap m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 4; ++l) {
      const uint32_t k = 2 * (t % 4) + (l & 1) + 8 * (l >> 1), n = t >> 2;
      m[t * 4 + l] = static_cast<uint16_t>(k * 8 + n);
    }
  return m;
}

/// C and D; 128 entries are used.
constexpr FragmentMap m16n8k16_c_map() {
  FragmentMap m{};
  for (uint32_t t = 0; t < 32; ++t)
    for (uint32_t l = 0; l < 4; ++l) {
      const uint32_t row = (t >> 2) + 8 * (l >> 1), col = 2 * (t % 4) + (l & 1);
      m[t * 4 + l] = static_cast<uint16_t>(row * 8 + col);
    }
  return m;
}

/// Static data, valid until the process ends (as plugin.h asks of a map).
inline constexpr FragmentMap kM16N8K16A = m16n8k16_a_map();
inline constexpr FragmentMap kM16N8K16B = m16n8k16_b_map();
inline constexpr FragmentMap kM16N8K16C = m16n8k16_c_map();

/// mma.sync m16n8k16 with `input` (FLOAT16 or BFLOAT16) operands and float32 accumulators.
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
          kM16N8K16A.data(),
          kM16N8K16B.data(),
          kM16N8K16C.data()};
}

}  // namespace polygrad::sdk::ptx

#endif  // POLYGRAD_PTX_MMA_HPP
