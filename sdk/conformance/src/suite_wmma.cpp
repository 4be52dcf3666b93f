// WMMA (kernel ISA 2) on every tensor-core shape a device lists: each thread of a group gathers
// its lanes of A, B and C through the shape's element maps (the canonical order where a map is
// NULL), runs WMMA, and scatters D's lanes back; the result must equal A * B + C computed here.
// Inputs are small integers, exact in every dtype a tensor core takes, so the check is exact.
#include <polygrad/plugin.hpp>
#include <polygrad/program_builder.hpp>

#include <string>
#include <vector>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

using Ref = sdk::ProgramBuilder::Ref;

/// Entry [t * lanes + l] of `map`, or the canonical t * lanes + l when map is NULL.
std::vector<int32_t> element_map(const uint16_t* map, uint32_t elements) {
  std::vector<int32_t> out(elements);
  for (uint32_t e = 0; e < elements; ++e) out[e] = map ? map[e] : static_cast<int32_t>(e);
  return out;
}

/// Slots: 0 D, 1 A, 2 B, 3 C, 4-7 the maps of A, B, C and D (as C).
sdk::ProgramBuilder wmma_program(const pg_tensor_core& tc, uint32_t index) {
  const uint32_t threads = tc.threads ? tc.threads : 1;
  const uint32_t la = tc.m * tc.k / threads, lb = tc.k * tc.n / threads, lc = tc.m * tc.n / threads;
  sdk::ProgramBuilder b("pgc_wmma_" + std::to_string(index));
  const auto dta = static_cast<pg_dtype>(tc.dtype_a), dtb = static_cast<pg_dtype>(tc.dtype_b),
             dtc = static_cast<pg_dtype>(tc.dtype_c);
  Ref d = b.param_buffer(0, dtc), a = b.param_buffer(1, dta), bb = b.param_buffer(2, dtb),
      c = b.param_buffer(3, dtc);
  Ref amap = b.param_buffer(4, PG_DTYPE_INT32), bmap = b.param_buffer(5, PG_DTYPE_INT32),
      cmap = b.param_buffer(6, PG_DTYPE_INT32);
  Ref t = threads > 1 ? b.special(PG_SPECIAL_LOCAL, 0) : b.const_i(PG_DTYPE_INT32, 0);
  auto slot = [&](Ref map, uint32_t lanes, uint32_t l) {
    Ref at = b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, t, b.const_i(PG_DTYPE_INT32, lanes)),
                      b.const_i(PG_DTYPE_INT32, l));
    return b.load(b.index(map, at));
  };
  auto fragment = [&](Ref buf, Ref map, uint32_t lanes) {
    std::vector<Ref> values;
    for (uint32_t l = 0; l < lanes; ++l)
      values.push_back(b.load(b.index(buf, slot(map, lanes, l))));
    return lanes == 1 ? values[0] : b.vectorize(values);
  };
  Ref fa = fragment(a, amap, la), fb = fragment(bb, bmap, lb), fc = fragment(c, cmap, lc);
  pg_arg arg;
  arg.i = index;
  Ref out = b.emit(PG_OP_WMMA, dtc, {fa, fb, fc}, arg, static_cast<uint8_t>(lc));
  for (uint32_t l = 0; l < lc; ++l)
    b.store(b.index(d, slot(cmap, lc, l)), lc == 1 ? out : b.gep(out, l));
  if (threads > 1) b.set_local_size(threads, 1, 1);
  return b;
}

}  // namespace

void run_wmma_suite(const Session& s, Suite& suite) {
  const pg_capabilities& caps = s.properties().caps;
  for (uint32_t index = 0; index < caps.tensor_core_count && index < PG_MAX_TENSOR_CORES; ++index) {
    const pg_tensor_core& tc = caps.tensor_cores[index];
    const std::string check = "WMMA." + std::to_string(tc.m) + "x" + std::to_string(tc.n) + "x" +
                              std::to_string(tc.k) + "." + sdk::dtype_name(tc.dtype_a);
    const uint32_t threads = tc.threads ? tc.threads : 1;
    if (!suite.expect(
            threads <= caps.max_threads_per_group && threads <= caps.max_local_dims[0], check,
            "the shape's " + std::to_string(threads) + " threads exceed the device's group limits"))
      continue;
    const auto dta = static_cast<pg_dtype>(tc.dtype_a), dtb = static_cast<pg_dtype>(tc.dtype_b),
               dtc = static_cast<pg_dtype>(tc.dtype_c);
    std::vector<HostArray> buffers = {HostArray(dtc, tc.m * tc.n), HostArray(dta, tc.m * tc.k),
                                      HostArray(dtb, tc.k * tc.n), HostArray(dtc, tc.m * tc.n)};
    auto fill = [](HostArray& h, pg_dtype dt, uint32_t seed) {
      for (size_t e = 0; e < h.size(); ++e)
        h.set(e, from_double(dt, static_cast<double>(static_cast<int>((e * 7 + seed) % 5) - 2)));
    };
    fill(buffers[1], dta, 1);
    fill(buffers[2], dtb, 3);
    fill(buffers[3], dtc, 2);
    for (const auto& [map, n] :
         {std::pair{tc.a_map, uint32_t{tc.m} * tc.k}, std::pair{tc.b_map, uint32_t{tc.k} * tc.n},
          std::pair{tc.c_map, uint32_t{tc.m} * tc.n}}) {
      const std::vector<int32_t> m = element_map(map, n);
      HostArray h(PG_DTYPE_INT32, n);
      for (uint32_t e = 0; e < n; ++e) h.set(e, int_value(m[e]));
      buffers.push_back(h);
    }
    LaunchShape shape;
    shape.local = {threads, 1, 1};
    sdk::ProgramBuilder program = wmma_program(tc, index);
    RunResult r = s.run(program.program(), buffers, shape);
    if (!suite.expect(r.stage == Stage::done, check, "did not run: " + r.call.describe())) continue;
    std::string wrong;
    for (uint32_t row = 0; row < tc.m; ++row)
      for (uint32_t col = 0; col < tc.n; ++col) {
        double want = to_double(dtc, buffers[3].get(row * tc.n + col));
        for (uint32_t k = 0; k < tc.k; ++k)
          want += to_double(dta, buffers[1].get(row * tc.k + k)) *
                  to_double(dtb, buffers[2].get(k * tc.n + col));
        const double got = to_double(dtc, buffers[0].get(row * tc.n + col));
        if (got != want && wrong.size() < 200)
          wrong += " D[" + std::to_string(row) + "][" + std::to_string(col) +
                   "] = " + std::to_string(got) + " (want " + std::to_string(want) + ")";
      }
    suite.expect(wrong.empty(), check, "A * B + C differs:" + wrong);
  }
}

}  // namespace polygrad::conformance::detail
