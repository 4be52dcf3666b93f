// The wasm renderer's function writer: a kernel program's instructions to the body of one
// WebAssembly function (locals and code). function_writer.cpp holds the grid loops, locals,
// constants, launch indices and memory; function_writer_alu.cpp the conversions and arithmetic.
// Every value lives in WebAssembly locals, one local per lane (a vector is its lanes;
// VECTORIZE, GEP and a splat CONST only name existing locals), and each instruction reads its
// sources with local.get and writes its result with local.set. Integers narrower than 32 bits
// are held in an i32, sign- or zero-extended after every operation that could leave the range,
// so comparisons, division and shifts need no fix-up.
#ifndef POLYGRAD_WASM_FUNCTION_WRITER_HPP
#define POLYGRAD_WASM_FUNCTION_WRITER_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <vector>

#include "wasm_encoder.hpp"

namespace polygrad::wasm::detail {

/// How a dtype is held in WebAssembly.
struct Repr {
  ValType type = ValType::I32;
  uint32_t bytes = 0;  ///< element size in memory
  bool is_float = false, is_signed = false, is_bool = false;
};

/// The Repr of `dt`; PG_ERR_UNSUPPORTED for a dtype the renderer does not take.
Repr repr_of(uint32_t dt);
/// log2 of an element size of 1, 2, 4 or 8 bytes (a memory access's alignment).
uint32_t log2_of(uint32_t bytes);

/// Function parameters after the buffers and scalars.
constexpr uint32_t kScratchParam = 0, kCountParams = 1, kLocalSizeParams = 4, kExtraParams = 7;

class FunctionWriter {
 public:
  explicit FunctionWriter(const pg_kernel_program& p)
      : p_(p),
        lanes_(p.instruction_count),
        nparams_(p.buffer_count + p.scalar_count + kExtraParams) {}

  /// The function body (locals and code) and the scratch bytes it needs.
  ByteWriter body();
  uint32_t scratch_bytes() const { return scratch_bytes_; }
  bool group_memory() const { return group_memory_; }

 private:
  // --- locals and small emitters -------------------------------------------------------------
  uint32_t new_local(ValType t);
  uint32_t param(uint32_t extra) const { return p_.buffer_count + p_.scalar_count + extra; }
  void get(uint32_t local);
  void set(uint32_t local);
  void const_i32(int32_t v);
  /// block; loop; exit unless var < end. `end` is a local of type t.
  void open_loop(uint32_t var, ValType t, uint32_t end, bool is_signed);
  /// var += 1; continue; end loop; end block.
  void close_loop(uint32_t var, ValType t);
  /// Brings the i32 on the stack into dtype dt's range (narrow ints, bool).
  void normalize(uint32_t dt);
  const pg_instruction& in(uint32_t i) const { return p_.instructions[i]; }
  uint32_t src(const pg_instruction& x, uint32_t k) const { return p_.operands[x.src_start + k]; }
  /// The local holding lane `l` of instruction i (a scalar broadcasts to every lane).
  uint32_t lane(uint32_t i, uint32_t l) const;
  [[noreturn]] void unsupported(uint32_t i, const std::string& why) const;

  // --- instructions ---------------------------------------------------------------------------
  void instruction(uint32_t i);

  uint32_t reserve_scratch(uint64_t bytes, uint32_t i);

  void param_scalar(uint32_t i, const pg_instruction& x);

  void special(uint32_t i, const pg_instruction& x);

  void constant(uint32_t i, const pg_instruction& x);
  void push_const(uint32_t dt, pg_arg a);

  // --- memory ---------------------------------------------------------------------------------
  void load_lane(uint32_t dt, uint32_t ptr, uint32_t l);
  void store_lane(uint32_t dt, uint32_t ptr, uint32_t value, uint32_t l);

  void load(uint32_t i, const pg_instruction& x, uint32_t n);

  void store(uint32_t i, const pg_instruction& x);

  // --- conversions ----------------------------------------------------------------------------
  void convert(uint32_t i, const pg_instruction& x, uint32_t n);

  void cast(uint32_t i, uint32_t from, uint32_t to);

  void bitcast(uint32_t i, uint32_t from, uint32_t to);

  // --- arithmetic -----------------------------------------------------------------------------
  /// The opcode of a two-operand op on representation r, or 0 when it has none.
  static uint8_t binary_opcode(uint32_t o, const Repr& r);

  void alu(uint32_t i, const pg_instruction& x, uint32_t n);
  void push_zero(ValType t);

  const pg_kernel_program& p_;
  std::vector<std::vector<uint32_t>> lanes_;  ///< per instruction: the local of each lane
  std::vector<ValType> locals_;               ///< declared locals after the parameters
  uint32_t nparams_;
  uint32_t index_[3] = {0, 0, 0};
  uint32_t scratch_bytes_ = 0;
  bool group_memory_ = false;
  ByteWriter code_;
};

}  // namespace polygrad::wasm::detail

#endif  // POLYGRAD_WASM_FUNCTION_WRITER_HPP
