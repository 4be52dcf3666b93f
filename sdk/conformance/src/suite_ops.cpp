// Runs every case of the op table on every dtype the device declares and fills the op x dtype
// support table.
#include <polygrad/plugin.hpp>

#include <cstring>

#include "op_cases.hpp"
#include "suites.hpp"

namespace polygrad::conformance::detail {

namespace {

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::render:
      return "render";
    case Stage::load:
      return "load";
    case Stage::alloc:
      return "alloc";
    case Stage::copy_in:
      return "copy_in";
    case Stage::launch:
      return "launch";
    case Stage::copy_out:
      return "copy_out";
    default:
      return "done";
  }
}

/// "" when the output matches, else the first mismatching element and its inputs.
std::string compare_output(const Kernel& k, const HostArray& got) {
  size_t width = sdk::dtype_size(got.dtype);
  for (size_t e = 0; e < k.expected.size(); ++e) {
    bool same = k.tolerance.bitwise
                    ? std::memcmp(got.bytes.data() + e * width, k.expected.bytes.data() + e * width,
                                  width) == 0
                    : values_match(got.dtype, got.get(e), k.expected.get(e), k.tolerance);
    if (same) continue;
    if (k.tolerance.bitwise) {
      auto hex = [&](const HostArray& a) {
        std::string text = "0x";
        for (size_t b = width; b-- > 0;) {  // little-endian: most significant byte last
          static const char digits[] = "0123456789abcdef";
          unsigned char byte = a.bytes[e * width + b];
          text += digits[byte >> 4];
          text += digits[byte & 15];
        }
        return text;
      };
      return "element " + std::to_string(e) + ": got bits " + hex(got) + ", want " +
             hex(k.expected) + " (BITCAST must keep every bit, NaN payloads included)";
    }
    std::string why = "element " + std::to_string(e) + ": got " +
                      format_value(got.dtype, got.get(e)) + ", want " +
                      format_value(got.dtype, k.expected.get(e));
    if (e < k.inputs.size()) why += " for " + k.inputs[e];
    return why;
  }
  return "";
}

/// Runs one kernel; returns the table cell and records the check.
Cell run_kernel(const Session& s, Suite& suite, Kernel& k, bool required) {
  std::string check = k.label;
  RunResult r = s.run(k.program.program(), k.buffers, k.shape);
  bool refused = (r.stage == Stage::render || r.stage == Stage::load) && !r.call.threw &&
                 r.call.status == PG_ERR_UNSUPPORTED;
  if (refused && !required) {
    suite.skip(check, "unsupported: " + r.call.message);
    return Cell::unsupported;
  }
  if (refused) {
    suite.fail(check, "refused with PG_ERR_UNSUPPORTED although the device declares " +
                          std::string(sdk::dtype_name(k.expected.dtype)) + ": " + r.call.message);
    return Cell::fail;
  }
  if (r.stage != Stage::done) {
    suite.fail(check, std::string(stage_name(r.stage)) + " failed: " + r.call.describe());
    return Cell::fail;
  }
  std::string diff = compare_output(k, k.buffers[0]);
  if (!diff.empty()) {
    suite.fail(check, diff);
    return Cell::fail;
  }
  suite.pass(check);
  return Cell::ok;
}

}  // namespace

void run_op_suite(const Session& s, Report& report) {
  Suite& suite = report.suite("ops");
  const pg_capabilities& caps = s.properties().caps;
  for (const OpCase& c : op_cases()) {
    for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) {
      pg_dtype dt = static_cast<pg_dtype>(d);
      if (!(caps.dtype_mask & (uint64_t{1} << d)) || !c.applies(dt, caps)) continue;
      bool required =
          c.required == Required::always ||
          (c.required == Required::with_local_memory && (caps.flags & PG_CAP_LOCAL_MEMORY)) ||
          (c.required == Required::unless_decomposed &&
           !(caps.flags & PG_CAP_DECOMPOSE_TRANSCENDENTAL));
      std::vector<Kernel> kernels;
      c.make(c, dt, caps, kernels);
      for (Kernel& k : kernels) {
        Cell cell = run_kernel(s, suite, k, required);
        for (pg_op row : c.rows) report.mark(row, dt, cell);
      }
    }
  }
}

}  // namespace polygrad::conformance::detail
