#include "target.hpp"

#include <polygrad/plugin_error.hpp>
#include <polygrad/ptx_mma.hpp>

#include <cctype>

namespace polygrad::cuda {

namespace {

constexpr uint32_t kMaxLanes = 16;
constexpr uint64_t kStaticSharedBytes = 48 * 1024;  // without the per-kernel opt-in
constexpr pg_tensor_core kTensorCores[] = {sdk::ptx::mma_m16n8k16(PG_DTYPE_FLOAT16),
                                           sdk::ptx::mma_m16n8k16(PG_DTYPE_BFLOAT16)};

bool atomic_dtype(uint32_t dtype) {
  return dtype == PG_DTYPE_INT32 || dtype == PG_DTYPE_UINT32 || dtype == PG_DTYPE_INT64 ||
         dtype == PG_DTYPE_UINT64 || dtype == PG_DTYPE_FLOAT32 || dtype == PG_DTYPE_FLOAT64;
}

uint32_t tensor_core_count(const Arch& arch) {
  return arch.number() >= 80 ? 2 : 0;
}

}  // namespace

std::string Arch::name() const {
  return "sm_" + std::to_string(number()) + (arch_specific ? "a" : "");
}

std::string Arch::ptx() const {
  return "compute_" + std::to_string(number()) + (arch_specific ? "a" : "");
}

Arch parse_arch(const std::string& text) {
  if (text.empty()) return parse_arch(kDefaultArch);
  auto bad = [&](const std::string& why) {
    sdk::fail(PG_ERR_UNSUPPORTED, "cuda: architecture '" + text + "' " + why);
  };
  if (text.rfind("sm_", 0) != 0) bad("is not of the form sm_XY (e.g. sm_90)");
  std::string digits = text.substr(3);
  Arch a;
  if (!digits.empty() && digits.back() == 'a') {
    a.arch_specific = true;
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.size() > 3) bad("is not of the form sm_XY (e.g. sm_90)");
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) bad("is not of the form sm_XY (e.g. sm_90)");
  const int n = std::stoi(digits);
  a.major = n / 10;
  a.minor = n % 10;
  if (n < kMinArch)
    bad("is older than CUDA 13 compiles for (sm_" + std::to_string(kMinArch) + " and newer)");
  return a;
}

void fill_capabilities(pg_capabilities& c, const Arch& arch, const DeviceFacts& facts) {
  c.flags = PG_CAP_GROUPS | PG_CAP_LOCAL_MEMORY | PG_CAP_ALIGNED_VECTORS | PG_CAP_ATOMIC_ADD;
  for (uint32_t dt = PG_DTYPE_BOOL; dt < PG_DTYPE_COUNT; ++dt) c.dtype_mask |= uint64_t{1} << dt;
  c.vector_width_bytes = 16;
  c.max_vector_lanes = kMaxLanes;
  c.max_threads_per_group = 1024;
  c.max_local_dims[0] = 1024;
  c.max_local_dims[1] = 1024;
  c.max_local_dims[2] = 64;
  c.max_global_dims[0] = 2147483647u;
  c.max_global_dims[1] = 65535;
  c.max_global_dims[2] = 65535;
  // An H100 SXM's figures where the device is not there to ask.
  c.compute_units = facts.sm_count ? facts.sm_count : 132;
  c.local_memory_bytes = kStaticSharedBytes;
  c.l1_cache_bytes = 256 * 1024;
  c.l2_cache_bytes = facts.l2_bytes ? facts.l2_bytes : uint64_t{50} << 20;
  c.subgroup_size = sdk::ptx::kWarpSize;
  c.index_bits = 32;
  c.max_allocation_bytes = facts.memory_bytes;
  c.tensor_core_count = tensor_core_count(arch);
  for (uint32_t i = 0; i < c.tensor_core_count; ++i) c.tensor_cores[i] = kTensorCores[i];
}

bool op_supported(const Arch& arch, uint32_t op, uint32_t dtype, uint32_t vcount) {
  if (op >= PG_OP_COUNT || dtype >= PG_DTYPE_COUNT) return false;
  if (op == PG_OP_ATOMIC_ADD) return vcount == 1 && atomic_dtype(dtype);
  if (op == PG_OP_WMMA) {
    for (uint32_t i = 0; i < tensor_core_count(arch); ++i) {
      const pg_tensor_core& tc = kTensorCores[i];
      if (dtype == tc.dtype_c && vcount == uint32_t{tc.m} * tc.n / tc.threads) return true;
    }
    return false;
  }
  return vcount >= 1 && vcount <= kMaxLanes;
}

}  // namespace polygrad::cuda
