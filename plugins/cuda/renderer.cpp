// The CUDA C++ dialect of the C-style renderer. One `extern "C" __global__` function per
// kernel, its launch bounds the program's local size; SPECIAL indices are blockIdx/threadIdx,
// DEFINE_LOCAL is __shared__, BARRIER is __syncthreads(). Vectors are aligned structs of lanes
// loaded and stored whole (ld.global.v4), which the host emits only at aligned addresses
// (PG_CAP_ALIGNED_VECTORS). 16-bit floats live as float in registers and convert with single
// PTX cvt instructions; tensor-core fragments go to mma.sync through inline PTX. No header is
// included, so NVRTC parses nothing but the kernel.
#include <polygrad/cstyle.hpp>
#include <polygrad/plugin_error.hpp>

#include "cuda_plugin.hpp"

namespace polygrad::cuda {

namespace {

cstyle::DialectTable cuda_table() {
  cstyle::DialectTable t = cstyle::c_table();
  t.type_names[PG_DTYPE_BOOL] = "bool";
  t.helper_prefix = "static __device__ __forceinline__";
  t.memcpy_name = "memcpy";
  t.native_vector_ops = false;
  t.aligned_vector_memory = true;
  // NVRTC runs with --fmad=false, so that a MUL and an ADD round as two instructions, as
  // everywhere else; MULACC, the one op that asks for a fused multiply-add, gets one.
  t.fma_f32 = "fmaf";
  t.fma_f64 = "fma";
  // The host unrolls what it means to; NVVM unrolled a row reduce's 64-step loop whole, its 64
  // loads and their 64-bit index math in flight at once: 255 registers and a spill.
  t.loop_pragma = "#pragma unroll 4";
  // A loop over staged slices stays rolled: unrolled 4 times, a 128 x 128 tensor-core tile held
  // four slices' staging loads at once (255 registers and a spill).
  t.barrier_loop_pragma = "#pragma unroll 1";
  t.inf_f32 = "__int_as_float(0x7f800000)";
  t.nan_f32 = "__int_as_float(0x7fffffff)";
  t.inf_f64 = "__longlong_as_double(0x7ff0000000000000LL)";
  t.nan_f64 = "__longlong_as_double(0x7fffffffffffffffLL)";
  return t;
}

int lane_bytes(const std::string& lane_type) {
  if (lane_type == "double" || lane_type == "long long" || lane_type == "unsigned long long")
    return 8;
  if (lane_type == "float" || lane_type == "int" || lane_type == "unsigned int") return 4;
  if (lane_type == "short" || lane_type == "unsigned short") return 2;
  return 1;
}

std::string lanes_of(const std::string& v, int first, int count) {
  std::string out;
  for (int l = first; l < first + count; ++l)
    out += (l > first ? ", " : "") + v + ".v[" + std::to_string(l) + "]";
  return out;
}

class CudaDialect : public cstyle::Dialect {
 public:
  CudaDialect() : Dialect(cuda_table()) {}

  // Conversions through the hardware's cvt; NaNs take the portable path, which keeps their
  // payloads as the base's contract asks.
  std::string float16_helpers() const override {
    // A NaN is built from its bits in line, as the portable helpers do, and chosen by a select:
    // the portable functions inlined at every conversion made a tensor-core tile's code (and
    // ptxas's time) ten times larger, and calls to them slowed the tile by half on an H200.
    return R"({P} float pg_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  const unsigned nan = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
  return ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) ? __uint_as_float(nan) : f;
}
{P} unsigned short pg_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  const unsigned u = __float_as_uint(f), m = (u & 0x7fffffu) >> 13;
  const unsigned short nan = (unsigned short)(((u >> 16) & 0x8000u) | 0x7c00u | (m ? m : 0x200u));
  return f != f ? nan : h;
}
{P} float pg_round_f16(float x) { return pg_f16_to_f32(pg_f32_to_f16(x)); }
{P} float pg_cast_f16(double x) {
  unsigned short h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
  const unsigned long long b = (unsigned long long)__double_as_longlong(x);
  const unsigned p = (unsigned)(b >> 42) & 0x3ffu;
  const unsigned short nan = (unsigned short)(((b >> 48) & 0x8000u) | 0x7c00u | (p ? p : 0x200u));
  return pg_f16_to_f32(x != x ? nan : h);
}
)";
  }

  // Two floats to the packed 16-bit pair an mma.sync operand register holds (lo in bits 0-15).
  std::string helpers() const override {
    return R"({P} unsigned pg_pack_f16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
{P} unsigned pg_pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
)";
  }

  std::string kernel_open(const cstyle::KernelInfo& k) const override {
    const uint32_t threads = k.local_size[0] * k.local_size[1] * k.local_size[2];
    std::string text = "extern \"C\" __global__ void ";
    if (threads > 0) text += "__launch_bounds__(" + std::to_string(threads) + ") ";
    text += k.name + "(";
    bool first = true;
    for (size_t i = 0; i < k.buffers.size(); ++i, first = false)
      text += std::string(first ? "" : ", ") + "void* pg_b" + std::to_string(i);
    for (size_t i = 0; i < k.scalars.size(); ++i, first = false)
      text += std::string(first ? "" : ", ") + "long long pg_s" + std::to_string(i);
    return text + ") {\n";
  }
  std::string buffer_param(const cstyle::KernelInfo&, uint32_t slot) const override {
    return "pg_b" + std::to_string(slot);
  }
  std::string scalar_param(const cstyle::KernelInfo&, uint32_t slot) const override {
    return "pg_s" + std::to_string(slot);
  }
  std::string special(pg_special_kind kind, int dim) const override {
    static const char* axis[3] = {"x", "y", "z"};
    const std::string a = axis[dim];
    switch (kind) {
      case PG_SPECIAL_GROUP:
        return "(int)blockIdx." + a;
      case PG_SPECIAL_LOCAL:
        return "(int)threadIdx." + a;
      default:
        return "(int)(blockIdx." + a + " * blockDim." + a + " + threadIdx." + a + ")";
    }
  }
  std::string barrier() const override { return "__syncthreads()"; }
  std::string define_local(const std::string& type, const std::string& name,
                           int64_t count) const override {
    return "__shared__ __align__(16) " + type + " " + name + "[" + std::to_string(count) + "];";
  }
  std::string atomic_add(pg_dtype dtype, const std::string& ptr,
                         const std::string& value) const override {
    switch (dtype) {
      case PG_DTYPE_INT32:
      case PG_DTYPE_UINT32:
      case PG_DTYPE_UINT64:
      case PG_DTYPE_FLOAT32:
      case PG_DTYPE_FLOAT64:
        return "atomicAdd(" + ptr + ", " + value + ");";
      case PG_DTYPE_INT64:  // two's complement: the unsigned add is the signed one
        return "atomicAdd((unsigned long long*)" + ptr + ", (unsigned long long)" + value + ");";
      default:
        return "";
    }
  }
  std::string math(pg_op op, bool is_double, const std::string& x) const override {
    const char* name = nullptr;
    switch (op) {
      case PG_OP_EXP2:
        name = "exp2";
        break;
      case PG_OP_LOG2:
        name = "log2";
        break;
      case PG_OP_SIN:
        name = "sin";
        break;
      case PG_OP_SQRT:
        name = "sqrt";
        break;
      case PG_OP_TRUNC:
        name = "trunc";
        break;
      default:
        return Dialect::math(op, is_double, x);
    }
    return std::string(name) + (is_double ? "" : "f") + "(" + x + ")";
  }
  std::string vector_typedef(const std::string& lane_type, int lanes) const override {
    int align = 1;
    const int bytes = lane_bytes(lane_type) * lanes;
    while (align < 16 && bytes % (2 * align) == 0) align *= 2;
    return "struct __align__(" + std::to_string(align) + ") " + vector_type(lane_type, lanes) +
           " { " + lane_type + " v[" + std::to_string(lanes) + "]; };\n";
  }
  std::string vector_literal(const std::string& type,
                             const std::vector<std::string>& lanes) const override {
    std::string out = type + "{{";
    for (size_t l = 0; l < lanes.size(); ++l) out += (l ? ", " : "") + lanes[l];
    return out + "}}";
  }
  std::string vector_lane(const std::string& vec, int lane) const override {
    return vec + ".v[" + std::to_string(lane) + "]";
  }
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: A in 4 registers of packed pairs, B in
  // 2, C and D in 4 floats; lane order is the fragment order of ptx_mma.hpp.
  std::string wmma(uint32_t index, const std::string& out, const std::string& a,
                   const std::string& b, const std::string& c, int a_lanes, int b_lanes,
                   int c_lanes) const override {
    if (index > 1 || a_lanes != 8 || b_lanes != 4 || c_lanes != 4) return "";
    const std::string pack = index == 0 ? "pg_pack_f16x2(" : "pg_pack_bf16x2(";
    std::vector<std::string> a_words, b_words;
    for (int r = 0; r < 4; ++r) a_words.push_back(pack + lanes_of(a, 2 * r, 2) + ")");
    for (int r = 0; r < 2; ++r) b_words.push_back(pack + lanes_of(b, 2 * r, 2) + ")");
    return wmma_words(index, out, a_words, b_words, c, c_lanes);
  }
  std::string wmma_words(uint32_t index, const std::string& out, const std::vector<std::string>& a,
                         const std::vector<std::string>& b, const std::string& c,
                         int c_lanes) const override {
    if (index > 1 || a.size() != 4 || b.size() != 2 || c_lanes != 4) return "";
    const std::string type = index == 0 ? "f16" : "bf16";
    std::string text = "asm(\"mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type +
                       ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, "
                       "%13};\" : ";
    for (int l = 0; l < 4; ++l)
      text += std::string(l ? ", " : "") + "\"=f\"(" + out + ".v[" + std::to_string(l) + "])";
    text += " : ";
    for (const std::string& w : a) text += "\"r\"(" + w + "), ";
    for (const std::string& w : b) text += "\"r\"(" + w + "), ";
    for (int l = 0; l < 4; ++l)
      text += std::string(l ? ", " : "") + "\"f\"(" + c + ".v[" + std::to_string(l) + "])";
    return text + ");";
  }
};

const CudaDialect& dialect() {
  static const CudaDialect d;
  return d;
}

}  // namespace

std::string render_cuda(const pg_kernel_program& program) {
  return cstyle::render(program, dialect());
}

}  // namespace polygrad::cuda
