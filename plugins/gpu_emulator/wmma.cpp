// WMMA: a collective of the 32 threads of a warp (32 consecutive flat local ids of a group).
// Each thread holds lanes of A, B and C laid out by the tensor core's element maps; the warp's
// fragments are gathered into whole matrices, D = A * B + C is computed with every product
// exact and the sum in double (f16 and bf16 products are exact in double), rounded once to
// the accumulator's dtype, and each thread gets its lanes of D back.
#include <polygrad/plugin.hpp>

#include <vector>

#include "batch.hpp"
#include "executor.hpp"
#include "target.hpp"

namespace polygrad::gpu_emu {

void run_wmma(const Instr& in, Batch& b, std::vector<uint32_t>& counts) {
  const pg_tensor_core& tc = tensor_core(static_cast<uint32_t>(in.imm));
  const uint32_t warp = tc.threads, warps = b.width / warp;
  const uint32_t la = tc.m * tc.k / warp, lb = tc.k * tc.n / warp, lc = tc.m * tc.n / warp;
  const Active& active = b.active(in);
  if (!active.full) {  // a warp takes part whole or not at all
    std::fill(counts.begin(), counts.begin() + warps, 0u);
    for_each_thread(active, [&](uint32_t t) { ++counts[t / warp]; });
    for (uint32_t w = 0; w < warps; ++w)
      if (counts[w] != 0 && counts[w] != warp)
        b.fault(in, "warp " + std::to_string(b.thread_of[w * warp] / warp) + " of " +
                        b.group_name(b.group_of[w * warp]) + " reaches WMMA with " +
                        std::to_string(counts[w]) + " of its " + std::to_string(warp) +
                        " threads; a tensor-core op needs the whole warp");
  }
  std::vector<double> a(tc.m * tc.k), bm(tc.k * tc.n), c(tc.m * tc.n);
  for (uint32_t w = 0; w < warps; ++w) {
    if (!active.full && counts[w] == 0) continue;
    for (uint32_t q = 0; q < warp; ++q) {
      const uint32_t t = w * warp + q;
      for (uint32_t l = 0; l < la; ++l) a[tc.a_map[q * la + l]] = b.row(in.src[0] + l)[t].f;
      for (uint32_t l = 0; l < lb; ++l) bm[tc.b_map[q * lb + l]] = b.row(in.src[1] + l)[t].f;
      for (uint32_t l = 0; l < lc; ++l) c[tc.c_map[q * lc + l]] = b.row(in.src[2] + l)[t].f;
    }
    for (uint32_t row = 0; row < tc.m; ++row)
      for (uint32_t col = 0; col < tc.n; ++col) {
        double sum = c[row * tc.n + col];
        for (uint32_t k = 0; k < tc.k; ++k) sum += a[row * tc.k + k] * bm[k * tc.n + col];
        c[row * tc.n + col] =
            with_dtype(tc.dtype_c, [&]<pg_dtype DT>() { return Type<DT>::round(sum); });
      }
    for (uint32_t q = 0; q < warp; ++q)
      for (uint32_t l = 0; l < lc; ++l) b.row(in.dst + l)[w * warp + q].f = c[tc.c_map[q * lc + l]];
  }
}

}  // namespace polygrad::gpu_emu
