// The v8 engine held against the interp engine (wabt's interpreter, the reference): every
// kernel of the conformance kit's op table (every op, dtype and vector width the wasm device
// declares) runs on both, on the same inputs, and the outputs must be the same bytes (a NaN
// may differ in its payload only). The kit checks each against C++ references; this checks
// that the JIT computes what the interpreter does, bit for bit.
#include <gtest/gtest.h>

#include <polygrad/plugin.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "../../sdk/conformance/src/op_cases.hpp"
#include "../plugin_driver/plugin_driver.hpp"

namespace polygrad::test {
namespace {

namespace cd = conformance::detail;

/// The v8 engine's way of compiling for this run: $POLYGRAD_WASM_COMPILE (ctest runs the
/// suite once with each), else the plugin's default.
std::string compile_mode() {
  const char* mode = std::getenv("POLYGRAD_WASM_COMPILE");
  return mode != nullptr && *mode != '\0' ? mode : "tiered";
}

class Engine : public PluginDriver {
 public:
  explicit Engine(const std::string& engine)
      : PluginDriver(POLYGRAD_WASM_PATH, PG_ARTIFACT_WASM,
                     {{"engine", engine}, {"compile", compile_mode()}}) {}

  /// The status of rendering, loading and launching `k`; its output bytes in `out`.
  pg_status run(cd::Kernel& k, std::vector<unsigned char>& out, std::string& error) {
    pg_program_t p = nullptr;
    pg_status s = load(k.program, p, error);
    if (s != PG_OK) return s;
    std::vector<pg_buffer_t> buffers;
    for (const cd::HostArray& a : k.buffers) {
      buffers.push_back(alloc(std::max<size_t>(a.bytes.size(), 1)));
      if (!a.bytes.empty()) copy_in(buffers.back(), a.bytes.data(), a.bytes.size());
    }
    s = launch(p, buffers, k.shape.scalars, k.shape.global, k.shape.local, error);
    unload(p);
    out.assign(k.buffers[0].bytes.size(), 0);
    if (s == PG_OK && !out.empty()) copy_out(out.data(), buffers[0], out.size());
    for (pg_buffer_t b : buffers) free(b);
    return s;
  }
};

bool is_nan(pg_dtype dt, const unsigned char* p) {
  if (dt == PG_DTYPE_FLOAT32) {
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
  }
  if (dt == PG_DTYPE_FLOAT64) {
    double d;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
  }
  return false;
}

/// "" when the two outputs agree, else the first element where they do not.
std::string differ(pg_dtype dt, const std::vector<unsigned char>& a,
                   const std::vector<unsigned char>& b) {
  size_t width = sdk::dtype_size(dt);
  if (a.size() != b.size()) return "sizes differ";
  for (size_t e = 0; e * width < a.size(); ++e) {
    const unsigned char *x = a.data() + e * width, *y = b.data() + e * width;
    if (std::memcmp(x, y, width) != 0 && !(is_nan(dt, x) && is_nan(dt, y)))
      return "element " + std::to_string(e);
  }
  return "";
}

TEST(WasmEngines, V8ComputesWhatTheInterpreterComputesOnEveryOpCase) {
  Engine v8("v8"), interp("interp");
  ASSERT_NE(std::string(v8.properties().name).find("v8"), std::string::npos);
  ASSERT_NE(std::string(interp.properties().name).find("interp"), std::string::npos);
  const pg_capabilities& caps = v8.properties().caps;
  size_t compared = 0;
  for (const cd::OpCase& c : cd::op_cases()) {
    for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) {
      pg_dtype dt = static_cast<pg_dtype>(d);
      if (!(caps.dtype_mask & (uint64_t{1} << d)) || !c.applies(dt, caps)) continue;
      std::vector<cd::Kernel> kernels;
      c.make(c, dt, caps, kernels);
      for (cd::Kernel& k : kernels) {
        std::vector<unsigned char> got, want;
        std::string e1, e2;
        pg_status s1 = v8.run(k, got, e1), s2 = interp.run(k, want, e2);
        ASSERT_EQ(s1, s2) << k.label << ": v8 '" << e1 << "', interp '" << e2 << "'";
        if (s1 != PG_OK) continue;
        EXPECT_EQ(differ(k.buffers[0].dtype, got, want), "") << k.label;
        ++compared;
      }
    }
  }
  // Every case of the table that the device runs: a few hundred kernels.
  EXPECT_GT(compared, 300u);
}

}  // namespace
}  // namespace polygrad::test
