// polygrad C-style renderer: one base that turns a pg_kernel_program into C-family source.
//
// A dialect (C for the CPU plugin, CUDA C, OpenCL C, ...) is a Dialect: a small table of
// spellings (DialectTable) plus a few hooks for the parts that differ between languages: the
// kernel signature and prologue, launch indices (SPECIAL), BARRIER, DEFINE_LOCAL, math
// functions, vector types. Everything else (SSA -> statements, loops, gated memory access,
// half-precision emulation, casts and bitcasts, NaN-propagating MAX) lives in the base.
//
//   class MyDialect : public polygrad::cstyle::Dialect {
//    public:
//     MyDialect() : Dialect(my_table()) {}
//     std::string kernel_open(const KernelInfo& k) const override { ... }
//     std::string special(pg_special_kind kind, int dim) const override { ... }
//   };
//   std::string source = polygrad::cstyle::render(program, MyDialect());
//
// Semantics rendered (see plugin.h): IDIV/MOD truncate, MAX of floats is NaN if either input
// is, CAST float->int truncates, BITCAST goes through memory (memcpy), a gated LOAD does not
// touch memory when its gate is false, SHR is arithmetic for signed types, comparisons give
// bool. float16 and bfloat16 may be held as float in registers and as 16-bit patterns in memory
// (DialectTable::half_as_float); every arithmetic result is then rounded back to the 16-bit
// format, so results equal true half-precision arithmetic.
//
// Errors: anything the dialect cannot express throws polygrad::sdk::Error(PG_ERR_UNSUPPORTED)
// naming the instruction, op and dtype; a malformed program throws PG_ERR_INVALID_ARGUMENT.
#ifndef POLYGRAD_CSTYLE_HPP
#define POLYGRAD_CSTYLE_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad::cstyle {

/// What a dialect needs to know about the kernel it opens.
struct KernelInfo {
  std::string name;               ///< entry name (a C identifier)
  std::vector<pg_dtype> buffers;  ///< pointee dtype per buffer slot (VOID when unused)
  std::vector<pg_dtype> scalars;  ///< dtype per scalar slot (VOID when unused)
  uint32_t local_size[3] = {1, 1, 1};
  bool uses_local = false;                   ///< the program has DEFINE_LOCAL or BARRIER
  bool uses_dim[3] = {false, false, false};  ///< some SPECIAL reads this launch dim
  bool streams = false;  ///< some STORE is written with stream_store (see Dialect)
};

/// Spellings that differ between dialects. Every string is inserted verbatim.
struct DialectTable {
  /// Scalar type names indexed by pg_dtype, as held in registers and in memory. With
  /// half_as_float, FLOAT16 and BFLOAT16 entries name the 16-bit storage type.
  const char* type_names[PG_DTYPE_COUNT] = {};
  /// Hold float16/bfloat16 values as float and store them as 16-bit patterns.
  bool half_as_float = true;
  /// Element type used for lanes of a bool vector (bool values are 0 or 1 in it).
  const char* bool_lane_type = "unsigned char";
  /// Qualifiers in front of each helper function of the prelude (e.g. "static inline").
  const char* helper_prefix = "static inline";
  /// A memcpy the dialect accepts: called as memcpy(dst, src, bytes).
  const char* memcpy_name = "__builtin_memcpy";
  /// Arithmetic, bitwise and comparison operators and ?: with a mask condition work on whole
  /// vectors (clang ext_vector_type), and Dialect::vector_convert converts between them.
  bool native_vector_ops = true;
  /// A vector LOAD or STORE of global or local memory is one access of the whole vector
  /// (`*(vector type*)ptr`), which needs the address aligned to the vector type: for targets
  /// that declare PG_CAP_ALIGNED_VECTORS, where the host emits vector accesses only at such
  /// addresses. false: the access is a memcpy, valid at any address.
  bool aligned_vector_memory = false;
  /// A fused multiply-add for MULACC on float32 and float64 (e.g. "fmaf", "fma"), for a
  /// dialect whose compiler does not contract `a * b + c` by itself; nullptr: that expression.
  const char* fma_f32 = nullptr;
  const char* fma_f64 = nullptr;
  /// A line written before every loop (e.g. "#pragma unroll 4"), for a compiler that would
  /// otherwise unroll the loops the host left rolled further than it meant; nullptr: none.
  const char* loop_pragma = nullptr;
  /// The same for a loop whose body has a barrier (a loop over staged slices), in place of
  /// loop_pragma; nullptr: loop_pragma.
  const char* barrier_loop_pragma = nullptr;
  /// Suffix for float32 literals ("f").
  const char* float_suffix = "f";
  /// Spelling of +inf and quiet NaN for float32 and float64.
  const char* inf_f32 = "__builtin_inff()";
  const char* nan_f32 = "__builtin_nanf(\"\")";
  const char* inf_f64 = "__builtin_inf()";
  const char* nan_f64 = "__builtin_nan(\"\")";
};

/// A C-family language. Subclass it, fill a DialectTable, override the hooks that differ.
class Dialect {
 public:
  explicit Dialect(const DialectTable& table) : table_(table) {}
  virtual ~Dialect() = default;

  const DialectTable& table() const { return table_; }

  /// Text before the kernel: typedefs, helper functions. The base prepends vector typedefs
  /// and those of its own helpers the kernel calls; this adds dialect-specific ones, emitted
  /// as they are. Default: nothing.
  virtual std::string prelude(const KernelInfo& kernel) const { return ""; }

  /// Definitions of the float16 helpers when the dialect has faster ones than the portable
  /// bit manipulation (e.g. a hardware half type). Four functions, each behind
  /// DialectTable::helper_prefix (written as {P}; {M} is the memcpy spelling), each starting
  /// a line (a one-line comment may come before it; a body is indented and closed by a "}"
  /// line), so that the base can leave out those a kernel does not call:
  ///   float pg_f16_to_f32(unsigned short bits)   exact; NaN payloads kept
  ///   unsigned short pg_f32_to_f16(float)        of a value already representable in half
  ///   float pg_round_f16(float)                  round an arithmetic result to half
  ///   float pg_cast_f16(double)                  convert any value with one rounding
  /// Default: "" (the portable versions).
  virtual std::string float16_helpers() const { return ""; }

  /// More helper functions of the dialect's own, written like float16_helpers' (each behind
  /// {P}, starting a line): the base keeps those a kernel calls, with the base's. Default: "".
  virtual std::string helpers() const { return ""; }

  /// The kernel signature through its opening brace, and any prologue. Buffer and scalar
  /// parameters are then read with buffer_param/scalar_param.
  virtual std::string kernel_open(const KernelInfo& kernel) const = 0;

  /// Expression for the start of buffer `slot` as an untyped or typed pointer.
  virtual std::string buffer_param(const KernelInfo& kernel, uint32_t slot) const = 0;

  /// Expression for the raw 64-bit value of scalar `slot` (an int64 that holds either the
  /// integer or the bit pattern of a double).
  virtual std::string scalar_param(const KernelInfo& kernel, uint32_t slot) const = 0;

  /// Text that opens the per-work-item body (loops over the launch grid on a CPU); closed by
  /// body_close. Default: nothing.
  virtual std::string body_open(const KernelInfo& kernel) const { return ""; }
  virtual std::string body_close(const KernelInfo& kernel) const { return ""; }

  /// Closes the kernel. Default: "}\n".
  virtual std::string kernel_close(const KernelInfo& kernel) const { return "}\n"; }

  /// An int expression for launch index `kind` along `dim` (0..2).
  virtual std::string special(pg_special_kind kind, int dim) const = 0;

  /// A statement that stores the whole vector `value` (a variable of `lanes` lanes) at `ptr`
  /// bypassing the cache, for a STORE hinted PG_STORE_STREAM; "" (the default) writes an
  /// ordinary store. KernelInfo::streams tells kernel_close that some store used it (to add
  /// the fence that orders such stores before the kernel returns).
  virtual std::string stream_store(const std::string& ptr, const std::string& value,
                                   int lanes) const {
    return "";
  }

  /// The workgroup barrier statement (without ';'), or "" when it is a no-op.
  virtual std::string barrier() const { return ""; }
  /// A statement adding `value` to `*ptr` atomically (ATOMIC_ADD), or "" where `dtype` has
  /// none. The default uses the GCC/clang __atomic builtins: fetch-add for 32- and 64-bit
  /// integers, a compare-exchange loop for float32 and float64.
  virtual std::string atomic_add(pg_dtype dtype, const std::string& ptr,
                                 const std::string& value) const;

  /// Statements computing WMMA with tensor core `index` of the target: `out` (declared, of
  /// `c_lanes` lanes of float or the accumulator's register type) = a * b + c, where a, b, c
  /// are vector variables of a_lanes, b_lanes, c_lanes lanes in registers (16-bit inputs held
  /// as float when DialectTable::half_as_float). "" (the default): no tensor cores.
  virtual std::string wmma(uint32_t index, const std::string& out, const std::string& a,
                           const std::string& b, const std::string& c, int a_lanes, int b_lanes,
                           int c_lanes) const {
    return "";
  }

  /// The same with 16-bit operands given as their bits: a_words and b_words are 32-bit
  /// unsigned expressions, each two consecutive lanes of the fragment (the lower lane in bits
  /// 0-15). "" (the default): wmma() is used, with the operands as float.
  virtual std::string wmma_words(uint32_t index, const std::string& out,
                                 const std::vector<std::string>& a_words,
                                 const std::vector<std::string>& b_words, const std::string& c,
                                 int c_lanes) const {
    return "";
  }

  /// Declaration (with ';') of a workgroup-shared array `name` of `count` `type` elements.
  virtual std::string define_local(const std::string& type, const std::string& name,
                                   int64_t count) const {
    return type + " " + name + "[" + std::to_string(count) + "];";
  }

  /// Call of the math function for EXP2, LOG2, SIN, SQRT or TRUNC on a float (`is_double`
  /// false) or double argument.
  virtual std::string math(pg_op op, bool is_double, const std::string& x) const;

  /// Name of the vector type with `lanes` lanes of scalar type `lane_type`.
  virtual std::string vector_type(const std::string& lane_type, int lanes) const;

  /// Typedef line for vector_type(lane_type, lanes), or "" when the type is built in.
  virtual std::string vector_typedef(const std::string& lane_type, int lanes) const;

  /// A vector value of type `type` from its lanes.
  virtual std::string vector_literal(const std::string& type,
                                     const std::vector<std::string>& lanes) const;

  /// `vec` converted lane by lane to the vector type `type` of as many lanes.
  virtual std::string vector_convert(const std::string& vec, const std::string& type) const {
    return "__builtin_convertvector(" + vec + ", " + type + ")";
  }

  /// Lane `lane` of vector expression `vec`.
  virtual std::string vector_lane(const std::string& vec, int lane) const {
    return vec + "[" + std::to_string(lane) + "]";
  }

 private:
  DialectTable table_;
};

/// Render `program` (already validated with polygrad::sdk::check_program) in `dialect`.
/// Throws polygrad::sdk::Error naming the instruction on anything it cannot render.
std::string render(const pg_kernel_program& program, const Dialect& dialect);

/// Bit mask (1 << pg_dtype) of the dtypes render() accepts in `dialect` (all but VOID).
uint64_t supported_dtype_mask(const Dialect& dialect);

/// A DialectTable with C type names for every dtype (bool -> _Bool, int32 -> int, float16 ->
/// unsigned short storage, ...): a starting point for C-like dialects.
DialectTable c_table();

}  // namespace polygrad::cstyle

#endif  // POLYGRAD_CSTYLE_HPP
