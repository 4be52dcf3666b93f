// Internal: the state of one render() call.
#ifndef POLYGRAD_CSTYLE_WRITER_HPP
#define POLYGRAD_CSTYLE_WRITER_HPP

#include <polygrad/cstyle.hpp>
#include <polygrad/plugin.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace polygrad::cstyle::detail {

/// What instruction i rendered to.
struct Value {
  std::string expr;  ///< variable name or literal
  pg_dtype dtype = PG_DTYPE_VOID;
  int lanes = 1;
  pg_addrspace space = PG_ADDR_NONE;
  int block = 0;  ///< id of the block (loop / if) it was defined in; 0 = kernel level
  /// A 16-bit float held as float (Expressions::is_half): its bits in memory, one expression
  /// per lane, where they are known without a conversion (a load, a select of such, an exact
  /// constant); empty otherwise. A value stored or packed as it was loaded then moves as bits.
  std::vector<std::string> raw;
};

/// The bits of `v` as FLOAT16 or BFLOAT16 when it is exactly representable there (a literal
/// of the storage type), else "".
std::string exact_half_bits(pg_dtype dt, double v);

/// The helper functions every dialect gets (16-bit float conversions, NaN-aware max, ...) that
/// `uses` (the kernel's text, in parts) calls, with the helpers those call: a compiler front end
/// parses every function it is given (NVRTC spent a fifth of a small kernel's compile on unused
/// ones). The helpers are split and indexed once per dialect, not per kernel.
std::string base_prelude(const Dialect& dialect, std::initializer_list<std::string_view> uses);

/// Scalar expressions, shared by the statement writer. All operands are names or literals.
class Expressions {
 public:
  explicit Expressions(const Dialect& dialect) : dialect_(dialect), table_(dialect.table()) {}

  bool is_half(pg_dtype dt) const;
  /// Lane type as held in registers ("float" for an emulated half).
  std::string reg_type(pg_dtype dt, int lanes_hint = 1) const;
  /// Element type in memory.
  std::string mem_type(pg_dtype dt) const;
  std::string from_memory(pg_dtype dt, const std::string& x) const;
  std::string to_memory(pg_dtype dt, const std::string& x) const;
  std::string constant(pg_dtype dt, pg_arg arg) const;
  std::string cast(pg_dtype from, pg_dtype to, const std::string& x) const;
  /// Scalar ALU expression for `op` with result dtype `dt` over inputs of dtype `in`, a pair
  /// that check_supported has already accepted.
  std::string alu(pg_op op, pg_dtype dt, pg_dtype in, const std::vector<std::string>& a) const;
  /// Whole-vector expression, or "" when the op must be written lane by lane.
  std::string vector_alu(pg_op op, pg_dtype dt, pg_dtype in,
                         const std::vector<std::string>& a) const;
  /// Throws unless `op` is defined on dtype `in` (result `dt`).
  void check_supported(pg_op op, pg_dtype dt, pg_dtype in, const std::string& where) const;

 private:
  std::string round_half(pg_dtype dt, const std::string& x) const;
  std::string cast_half(pg_dtype dt, const std::string& x) const;
  const Dialect& dialect_;
  const DialectTable& table_;
};

/// Writes the kernel statement by statement.
class Writer {
 public:
  Writer(const pg_kernel_program& program, const Dialect& dialect);
  std::string run();

 private:
  void emit(uint32_t i);
  void emit_param(uint32_t i, const pg_instruction& in);
  void emit_load(uint32_t i, const pg_instruction& in);
  void emit_store(uint32_t i, const pg_instruction& in);
  void emit_atomic_add(uint32_t i, const pg_instruction& in);
  void emit_alu(uint32_t i, const pg_instruction& in);
  void emit_cast(uint32_t i, const pg_instruction& in);
  void emit_bitcast(uint32_t i, const pg_instruction& in);
  void emit_vector(uint32_t i, const pg_instruction& in);
  /// Declares lane k's bits of value i as `r<i>_<k>` = `bits[k]` and records them in its raw.
  void declare_raw(uint32_t i, const std::vector<std::string>& bits);
  /// LOAD of a 16-bit float through its bits (emit_load's path for them); false when its
  /// alternative's bits are unknown, for the general path.
  bool emit_half_load(uint32_t i, const pg_instruction& in);

  const Value& src(const pg_instruction& in, uint32_t s) const;
  std::string lane(const Value& v, int l) const;
  bool is_closed(int block) const;
  /// Whether a BARRIER lies between RANGE `range` and its END_RANGE.
  bool loop_has_barrier(uint32_t range) const;
  std::string type_of(pg_dtype dt, int lanes);
  /// Signed integer vector type whose lanes are as wide as `dt`'s: the mask of a vector ?:.
  std::string mask_type(pg_dtype dt, int lanes);
  /// Whole-vector compare, MAX or WHERE through masks, or "" when the dialect has none.
  std::string vector_mask_op(pg_op op, pg_dtype dt, pg_dtype in, const std::vector<std::string>& a,
                             int lanes);
  std::string literal(const std::string& type, const std::vector<std::string>& lanes) const;
  void line(const std::string& text);
  [[noreturn]] void fail(pg_status status, uint32_t i, const std::string& what) const;
  std::string where(uint32_t i) const;

  const pg_kernel_program& program_;
  const Dialect& dialect_;
  Expressions ex_;
  KernelInfo info_;
  std::vector<Value> values_;
  /// Open blocks, innermost last: (block id, opening instr). Blocks nest and never reopen, so
  /// a block other than 0 that is not here has closed.
  std::vector<std::pair<int, uint32_t>> open_;
  int next_block_ = 1;
  std::vector<std::pair<std::string, int>> vector_types_;  ///< (lane type, lanes) used
  std::string params_;
  std::string body_;
  int indent_ = 1;
};

}  // namespace polygrad::cstyle::detail

#endif  // POLYGRAD_CSTYLE_WRITER_HPP
