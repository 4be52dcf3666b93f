// ATOMIC_ADD (kernel ISA 2), on plugins that declare PG_CAP_ATOMIC_ADD: every launch index adds
// a 0 or a 1 to one of four counters, so the sums are exact in every dtype and in any order.
#include <polygrad/plugin.hpp>
#include <polygrad/program_builder.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

constexpr uint32_t kItems = 64, kCounters = 4;

/// out[i % 4] += in[i] for i < 64.
sdk::ProgramBuilder histogram(pg_dtype dt) {
  sdk::ProgramBuilder b(std::string("pgc_atomic_") + sdk::dtype_name(dt));
  auto out = b.param_buffer(0, dt);
  auto in = b.param_buffer(1, dt);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto slot = b.binary(PG_OP_MOD, i, b.const_i(PG_DTYPE_INT32, kCounters));
  b.emit(PG_OP_ATOMIC_ADD, dt, {b.index(out, slot), b.load(b.index(in, i))});
  return b;
}

/// Whether the plugin says it takes ATOMIC_ADD on `dt` (its op_support), or, without one,
/// whether `dt` is a declared dtype other than bool (plugin.h's default).
bool takes(const Session& s, pg_dtype dt) {
  const pg_capabilities& caps = s.properties().caps;
  if (!((caps.dtype_mask >> dt) & 1u) || dt == PG_DTYPE_BOOL) return false;
  const pg_plugin& p = s.plugin();
  if (!PG_HAS_FIELD(&p, pg_plugin, compiler) || p.compiler == nullptr ||
      !PG_HAS_FIELD(p.compiler, pg_compiler_api, op_support) || p.compiler->op_support == nullptr)
    return true;
  pg_target target{};
  target.struct_size = sizeof(target);
  std::snprintf(target.arch, sizeof(target.arch), "%s", s.properties().target);
  target.caps = caps;
  return p.compiler->op_support(s.state(), &target, PG_OP_ATOMIC_ADD, dt, 1) != 0;
}

}  // namespace

void run_atomic_suite(const Session& s, Suite& suite) {
  for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) {
    const auto dt = static_cast<pg_dtype>(d);
    if (!takes(s, dt)) continue;
    const std::string check = std::string("ATOMIC_ADD.") + sdk::dtype_name(dt);
    std::vector<HostArray> buffers = {HostArray(dt, kCounters), HostArray(dt, kItems)};
    std::vector<int64_t> want(kCounters, 0);
    for (uint32_t i = 0; i < kItems; ++i) {
      const int64_t bit = (i * 7 + i / 5) % 3 == 0 ? 1 : 0;
      buffers[1].set(i, from_double(dt, static_cast<double>(bit)));
      want[i % kCounters] += bit;
    }
    for (uint32_t c = 0; c < kCounters; ++c) buffers[0].set(c, from_double(dt, 1.0));
    LaunchShape shape;
    shape.global = {kItems, 1, 1};
    sdk::ProgramBuilder program = histogram(dt);
    RunResult r = s.run(program.program(), buffers, shape);
    if (!suite.expect(r.stage == Stage::done, check, "did not run: " + r.call.describe())) continue;
    std::string wrong;
    for (uint32_t c = 0; c < kCounters; ++c) {
      const double got = to_double(dt, buffers[0].get(c));
      if (got != static_cast<double>(want[c] + 1))
        wrong += " counter " + std::to_string(c) + ": " + std::to_string(got) + " (want " +
                 std::to_string(want[c] + 1) + ")";
    }
    suite.expect(wrong.empty(), check, "sums differ:" + wrong);
  }
}

}  // namespace polygrad::conformance::detail
