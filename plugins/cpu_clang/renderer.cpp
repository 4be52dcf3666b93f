// The C dialect of the C-style renderer: one function per kernel that runs a slab of the
// launch grid (KernelFn). There are no work groups on the CPU: GROUP and GLOBAL indices are the
// loop index along their dim, LOCAL is 0, a barrier is a no-op and DEFINE_LOCAL is an array
// that lives for one grid point (local size is always 1).
#include <polygrad/cstyle.hpp>

#include <cstdio>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

namespace {

bool has_feature(const HostCpu& cpu, const std::string& name) {
  for (const std::string& f : cpu.features)
    if (f == "+" + name) return true;
  return false;
}

class CDialect : public cstyle::Dialect {
 public:
  CDialect()
      : Dialect(cstyle::c_table()),
        f16c_(has_feature(host_cpu(), "f16c")),
        vector_bits_(host_cpu().vector_width_bytes * 8) {}

  // With F16C, clang's __fp16 converts with one instruction each way (and never calls a
  // runtime library function); without it the portable bit manipulation is used.
  std::string float16_helpers() const override {
    if (!f16c_) return "";
    return "{P} float pg_f16_to_f32(unsigned short h) { __fp16 x; {M}(&x, &h, 2); return x; }\n"
           "{P} unsigned short pg_f32_to_f16(float f) {\n"
           "  __fp16 x = f;\n"
           "  unsigned short h;\n"
           "  {M}(&h, &x, 2);\n"
           "  return h;\n"
           "}\n"
           "{P} float pg_round_f16(float f) { return (float)(__fp16)f; }\n"
           "{P} float pg_cast_f16(double x) { return pg_f16_to_f32(pg_to_small_float(x, 10, 5)); "
           "}\n";
  }

  // The stream store needs the vector's natural alignment (movntps faults otherwise); a
  // buffer view at an odd offset takes the ordinary store.
  std::string prelude(const cstyle::KernelInfo& k) const override {
    std::string text;
    if (k.streams)
      text =
          "#define pg_stream_store(p, v)                                              \\\n"
          "  do {                                                                     \\\n"
          "    if (((unsigned long long)(p) & (sizeof(v) - 1)) == 0)                  \\\n"
          "      __builtin_nontemporal_store((v), (__typeof__(v)*)(p));               \\\n"
          "    else                                                                   \\\n"
          "      __builtin_memcpy((p), &(v), sizeof(v));                              \\\n"
          "  } while (0)\n";
    return text;
  }
  std::string stream_store(const std::string& ptr, const std::string& value,
                           int lanes) const override {
    if ((lanes & (lanes - 1)) != 0) return "";  // no natural alignment to test for
    return "pg_stream_store(" + ptr + ", " + value + ");";
  }
  // Non-temporal stores are weakly ordered: the fence makes them visible before the slab
  // returns and the pool reports the launch done.
  std::string kernel_close(const cstyle::KernelInfo& k) const override {
    if (!k.streams) return "}\n";
    return "#if defined(__x86_64__) || defined(__i386__)\n  __builtin_ia32_sfence();\n#else\n"
           "  __atomic_thread_fence(__ATOMIC_SEQ_CST);\n#endif\n}\n";
  }
  // min_vector_width: clang's default for AVX-512 hosts prefers 256-bit vectors and splits the
  // host's 512-bit vector types (the codegen's upcast vectors, sized by vector_width_bytes) in
  // two; the attribute keeps them whole (matmul's 16 accumulators fit the 32 zmm registers).
  std::string kernel_open(const cstyle::KernelInfo& k) const override {
    return "__attribute__((min_vector_width(" + std::to_string(vector_bits_) + "))) void " +
           k.name +
           "(void* const* pg_buffers, const long long* pg_scalars, long long pg_begin, "
           "long long pg_end, const unsigned int* pg_dims) {\n";
  }
  std::string buffer_param(const cstyle::KernelInfo&, uint32_t slot) const override {
    return "pg_buffers[" + std::to_string(slot) + "]";
  }
  std::string scalar_param(const cstyle::KernelInfo&, uint32_t slot) const override {
    return "pg_scalars[" + std::to_string(slot) + "]";
  }
  // Dims 1 and 2 get a loop only when the kernel reads their index: every grid point of an
  // unread dim would repeat the same work (racing with itself on a GPU), so once is enough.
  std::string body_open(const cstyle::KernelInfo& k) const override {
    std::string text = "  for (long long pg_g0 = pg_begin; pg_g0 < pg_end; ++pg_g0)\n";
    for (int d = 1; d < 3; ++d) {
      if (!k.uses_dim[d]) continue;
      std::string g = "pg_g" + std::to_string(d);
      text += "  for (long long " + g + " = 0; " + g + " < pg_dims[" + std::to_string(d) + "]; ++" +
              g + ")\n";
    }
    return text + "  {\n";
  }
  std::string body_close(const cstyle::KernelInfo&) const override { return "  }\n"; }
  std::string special(pg_special_kind kind, int dim) const override {
    if (kind == PG_SPECIAL_LOCAL) return "0";
    return "(int)pg_g" + std::to_string(dim);
  }

 private:
  bool f16c_;
  uint32_t vector_bits_;
};

const CDialect& dialect() {
  static const CDialect d;
  return d;
}

// A kernel the host register-tiled (4 or more vector multiply-accumulates: a matmul's R x V
// accumulators) has its vectors written out; all the SLP vectorizer finds left is the scalar
// index math of its rows, which it packs into vectors and unpacks per load. In a weight
// gradient's 6 x 16 tile (1024 x 512 x 1024, AMD EPYC Milan) that cost a spilled register per
// step: 8.2 ms with SLP, 5.8 without. Kernels that split a reduce into scalar lanes (softmax's
// row max and sum) rely on SLP for their vectors and keep it.
constexpr int kTiledMulacc = 4;
constexpr const char* kNoSlpMarker = "/* cpu_clang: no-slp */\n";

bool register_tiled(const pg_kernel_program& program) {
  int vector_mulacc = 0;
  for (uint32_t i = 0; i < program.instruction_count; ++i)
    vector_mulacc +=
        program.instructions[i].op == PG_OP_MULACC && program.instructions[i].vcount > 1;
  return vector_mulacc >= kTiledMulacc;
}

}  // namespace

std::string render_c(const pg_kernel_program& program) {
  std::string source = cstyle::render(program, dialect());
  return register_tiled(program) ? kNoSlpMarker + source : source;
}

bool wants_slp(const std::string& source) {
  return source.rfind(kNoSlpMarker, 0) != 0;
}

uint64_t c_dtype_mask() {
  return cstyle::supported_dtype_mask(dialect());
}

}  // namespace polygrad::cpu_clang
