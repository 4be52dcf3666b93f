// Input values of the op cases, chosen per dtype so that every case stays inside defined C
// behaviour (no signed overflow, shifts below the width, no division by zero for ints) while
// still covering the edges: negative operands of IDIV/MOD, NaN and infinities, extremes.
#include <polygrad/plugin.hpp>

#include <cmath>
#include <limits>

#include "op_cases.hpp"

namespace polygrad::conformance::detail {

namespace {

constexpr size_t kCount = 16;
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> int_list(pg_dtype dt, Inputs kind, int which) {
  bool is_signed = sdk::dtype_kind(dt) == 'i';
  int64_t bits = sdk::dtype_size(dt) * 8;
  int64_t min = is_signed ? wrap_int(dt, int64_t{1} << (bits - 1)) : 0;
  int64_t max = is_signed ? wrap_int(dt, static_cast<int64_t>(static_cast<uint64_t>(min) - 1))
                          : wrap_int(dt, -1);
  switch (kind) {
    case Inputs::arith:
      if (is_signed) return {-7, -3, -1, 0, 1, 2, 5, 9, -9, 4, 6, -5, 3, 8, -2, 7};
      return {0, 1, 2, 3, 5, 7, 9, 12, 4, 6, 8, 10, 11, 1, 2, 3};
    case Inputs::division:
      if (which == 0 && is_signed)
        return {-7, 7, -8, 9, 0, 1, -1, 100, -100, 13, -13, 5, -5, 64, -64, 3};
      if (which == 0) return {0, 7, 8, 9, 1, 100, 200, 13, 5, 64, 3, 255, 17, 42, 99, 6};
      if (is_signed) return {2, -2, 3, -3, 1, -1, 7, 5, -5, 4, -4, 6, 9, -9, 2, 3};
      return {2, 3, 1, 7, 5, 4, 6, 9, 2, 3, 8, 10, 11, 12, 13, 1};
    case Inputs::shift:
      if (which == 0 && is_signed) return {1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5};
      if (which == 0) break;  // unsigned: any value, shifted out bits wrap
      if (is_signed) {
        std::vector<int64_t> s;
        for (size_t k = 0; k < kCount; ++k)
          s.push_back(std::vector<int64_t>{0, 1, 2, bits - 4}[k % 4]);
        return s;
      } else {
        std::vector<int64_t> s;
        for (size_t k = 0; k < kCount; ++k) s.push_back(static_cast<int64_t>(k * 5) % bits);
        return s;
      }
    default:
      break;
  }
  if (is_signed) return {min, max, -1, 0, 1, 2, -2, 3, 100, -100, min + 1, max - 1, 7, -7, 64, 42};
  return {0, max, 1, 2, max - 1, 3, 100, 200, 7, 42, 64, 128, 255, 1000, 65535, 12345};
}

std::vector<double> float_list(Inputs kind) {
  if (kind == Inputs::edge)
    return {kNan, kInf, -kInf, -0.0, 0, 1, -1, 0.5, -2.5, 3, 1e3, -1e3, 1e-3, 2.25, 65504, -7};
  return {-3.5, -1, -0.25, 0, 0.5, 1, 2.75, 100.5, 1e-3, 7, -7.25, 1e4, kInf, -2, 3, kNan};
}

}  // namespace

std::vector<Value> sample_values(pg_dtype dt, Inputs kind, int which) {
  std::vector<Value> base;
  if (dt == PG_DTYPE_BOOL) {
    static const int pattern[3][4] = {{0, 0, 1, 1}, {0, 1, 0, 1}, {1, 0, 0, 1}};
    for (size_t k = 0; k < kCount; ++k) base.push_back(int_value(pattern[which % 3][k % 4]));
    return base;
  }
  if (sdk::dtype_is_float(dt)) {
    for (double v : float_list(kind)) base.push_back(from_double(dt, v));
  } else {
    for (int64_t v : int_list(dt, kind, which)) base.push_back(int_value(wrap_int(dt, v)));
    // Lists that are already per-operand (division, shift) are not permuted.
    if (kind == Inputs::division || (kind == Inputs::shift && which == 1)) return base;
    if (kind == Inputs::shift && which == 0 && sdk::dtype_kind(dt) == 'i') return base;
  }
  if (which == 0) return base;
  std::vector<Value> permuted(kCount);
  for (size_t k = 0; k < kCount; ++k)
    permuted[k] = base[k % 4 == 0 ? k : (k * 7 + 3 * static_cast<size_t>(which)) % kCount];
  return permuted;
}

HostArray sentinel_array(pg_dtype dt, size_t count) {
  HostArray a(dt, count);
  std::fill(a.bytes.begin(), a.bytes.end(), static_cast<unsigned char>(0x5a));
  return a;
}

std::string kernel_name(const char* case_name, pg_dtype dt, const std::string& suffix) {
  std::string name = "pgc_";
  for (const char* c = case_name; *c; ++c) name += (*c == '.') ? '_' : *c;
  name += std::string("_") + sdk::dtype_name(dt);
  if (!suffix.empty()) name += "_" + suffix;
  return name;
}

Kernel start_kernel(const OpCase& c, pg_dtype dt, pg_dtype out_dt, size_t count,
                    const std::string& label, const std::string& suffix) {
  Kernel k;
  k.label = label.empty() ? std::string(c.name) + " " + sdk::dtype_name(dt) : label;
  k.program = sdk::ProgramBuilder(kernel_name(c.name, dt, suffix));
  k.buffers.push_back(sentinel_array(out_dt, count));
  k.expected = k.buffers[0];
  k.shape.global = {static_cast<uint32_t>(count), 1, 1};
  k.tolerance.ulps = c.ulps;
  return k;
}

sdk::ProgramBuilder::Ref const_value(sdk::ProgramBuilder& b, pg_dtype dt, Value v, uint8_t vcount) {
  return sdk::dtype_is_float(dt) ? b.const_f(dt, v.f, vcount) : b.const_i(dt, v.i, vcount);
}

}  // namespace polygrad::conformance::detail
