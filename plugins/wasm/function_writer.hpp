// The wasm renderer's function writer: a kernel program's instructions to the body of one
// WebAssembly function (locals and code). function_writer.cpp holds the grid loops, locals,
// constants, launch indices and memory; function_writer_alu.cpp the conversions and arithmetic.
// function_writer_simd.cpp holds the SIMD128 forms.
//
// Every value lives in WebAssembly locals. A vector of exactly 16 bytes (f32x4, i32x4, f64x2,
// i64x2, i16x8, i8x16) is one v128 local, and a bool vector of 2, 4, 8 or 16 lanes is a v128
// mask (each lane all ones or all zeros, 16 / lanes bytes wide: what a SIMD comparison of
// that many lanes gives); ops with a SIMD128 form run on it directly, the others lane by lane
// (extract, scalar op, replace). Any other value is one local per lane (VECTORIZE, GEP and a
// splat CONST name existing lanes). Scalar integers narrower than 32 bits are held in an i32,
// sign- or zero-extended after every operation that could leave the range, so comparisons,
// division and shifts need no fix-up; in a v128 they are true 8- or 16-bit lanes.
// DEFINE_REG arrays accessed only at constant offsets, each access a whole slot of the widest
// access's lanes or one lane of it (vector accumulators), live in locals; other arrays live in
// scratch memory.
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

/// Whether a value of `n` lanes of dtype `dt` is held in one v128 local.
bool simd_shape(uint32_t dt, uint32_t n);

/// Where one lane of a value is: a scalar local (`count` 0) or lane `lane` of a v128 local that
/// holds `count` lanes of `dtype`.
struct LaneRef {
  uint32_t local = 0;
  uint32_t dtype = 0;
  uint8_t count = 0;
  uint8_t lane = 0;
  bool operator==(const LaneRef&) const = default;
};

/// Function parameters after the buffers and scalars.
constexpr uint32_t kScratchParam = 0, kCountParams = 1, kLocalSizeParams = 4, kExtraParams = 7;

class FunctionWriter {
 public:
  explicit FunctionWriter(const pg_kernel_program& p)
      : p_(p),
        lanes_(p.instruction_count),
        vec_(p.instruction_count, kNone),
        splat_(p.instruction_count),
        disp_(p.instruction_count, 0),
        nonneg_(p.instruction_count, false),
        reg_slot_(p.instruction_count),
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
  /// Where lane `l` of instruction i is (a scalar broadcasts to every lane).
  LaneRef lane(uint32_t i, uint32_t l) const;
  /// Pushes lane `l` of instruction i as a scalar of its dtype's representation.
  void push_lane(uint32_t i, uint32_t l);
  /// The local of a scalar value (a loop bound, a pointer, a condition).
  uint32_t scalar_local(uint32_t i);
  /// Number of lanes instruction i holds (1 for a scalar).
  uint32_t lane_count(uint32_t i) const { return static_cast<uint32_t>(lanes_[i].size()); }
  /// Records instruction i as the scalar locals `locals` of dtype dt.
  void set_scalars(uint32_t i, const std::vector<uint32_t>& locals);
  /// Records instruction i as v128 local `v` holding n lanes of dt.
  void set_vector(uint32_t i, uint32_t v, uint32_t dt, uint32_t n);
  [[noreturn]] void unsupported(uint32_t i, const std::string& why) const;

  // --- instructions ---------------------------------------------------------------------------
  void instruction(uint32_t i);

  uint32_t reserve_scratch(uint64_t bytes, uint32_t i);

  void param_scalar(uint32_t i, const pg_instruction& x);

  void special(uint32_t i, const pg_instruction& x);

  void constant(uint32_t i, const pg_instruction& x);
  void push_const(uint32_t dt, pg_arg a);

  // --- memory ---------------------------------------------------------------------------------
  /// Loads element `l` at ptr + disp bytes.
  void load_lane(uint32_t dt, uint32_t ptr, uint32_t l, uint32_t disp = 0);
  /// Stores lane `vl` of instruction `value` as element `l` at ptr + disp bytes.
  void store_lane(uint32_t dt, uint32_t ptr, uint32_t value, uint32_t vl, uint32_t l,
                  uint32_t disp = 0);

  void load(uint32_t i, const pg_instruction& x, uint32_t n);
  /// INDEX: a pointer is an i32 local plus a constant displacement in bytes (disp_), which
  /// loads and stores take as their memarg offset.
  void index(uint32_t i, const pg_instruction& x);
  /// Records whether integer instruction i is known to be >= 0 (loop counters, launch
  /// indices, non-negative constants and what sums, products and quotients keep so).
  void note_sign(uint32_t i);
  bool non_negative(uint32_t i) const;
  /// Leaves a loop or IF: the addresses computed inside it are no longer valid.
  void close_scope();
  /// Finds the INDEXes into a buffer whose offset is a + b with `a` from an enclosing scope
  /// (a row's base, b the loop's part): their address ptr + a * size is computed once, right
  /// after `a` (hoisted_), and the INDEX adds b * size, which the INDEXes in scope with the
  /// same b share. In i32 arithmetic (mod 2^32) the address is the same as ptr + (a + b) *
  /// size, so it holds for any a and b.
  void plan_hoisted_addresses();
  /// After instruction i: the addresses planned to be computed from it.
  void hoist_addresses(uint32_t i);
  /// Pushes scalar `base` as an i32 times `size`.
  void push_scaled(uint32_t base, uint32_t size);
  /// The local holding base * size as an i32, computed now unless a scope around has it.
  uint32_t scaled(uint32_t base, uint32_t size);

  void store(uint32_t i, const pg_instruction& x);

  // --- conversions ----------------------------------------------------------------------------
  void convert(uint32_t i, const pg_instruction& x, uint32_t n);

  void cast(uint32_t i, uint32_t from, uint32_t to);

  void bitcast(uint32_t i, uint32_t from, uint32_t to);

  // --- SIMD128 (function_writer_simd.cpp) --------------------------------------------------
  /// Pushes instruction i as a v128 of n lanes of dt: its local, a splat of a scalar, or its
  /// lanes put together.
  void push_vector(uint32_t i, uint32_t dt, uint32_t n);
  /// Turns a scalar on the stack (a bool's 0/1) into a lane of a v128 of n lanes of dt.
  void to_lane(uint32_t dt, uint32_t n);
  void splat(uint32_t dt, uint32_t n);
  void push_ref(const LaneRef& r);
  void extract(uint32_t dt, uint32_t n, uint32_t lane);
  void replace(uint32_t dt, uint32_t n, uint32_t lane);
  void v128_const(uint32_t dt, uint32_t n, pg_arg a);
  /// Instruction i, n lanes of dt, computed lane by lane: `push(l)` pushes lane l.
  template <class PushLane>
  void by_lanes(uint32_t i, uint32_t dt, uint32_t n, PushLane&& push);
  /// VECTORIZE into one v128: a splat, a shuffle of at most two vectors, or lane inserts.
  void vectorize(uint32_t i, const pg_instruction& x, uint32_t n);
  /// The SIMD128 form of an ALU op or CAST/BITCAST on a v128 result; false when it has none.
  bool simd_alu(uint32_t i, const pg_instruction& x, uint32_t n);
  bool simd_convert(uint32_t i, const pg_instruction& x, uint32_t n);
  /// Pushes a uniform shift count as an i32 (false when the lanes' counts may differ).
  bool push_shift_count(uint32_t s);

  // --- register arrays held in locals ---------------------------------------------------------
  /// The DEFINE_REG arrays that become locals (see the file comment).
  void plan_registers();
  struct RegArray {
    uint32_t lanes = 0;           ///< elements per slot: the widest access
    std::vector<uint32_t> slots;  ///< per slot: a v128 local, or the first of `lanes` locals
  };
  std::vector<RegArray> regs_;
  void load_slot(uint32_t i, const pg_instruction& x, uint32_t n);
  void store_slot(const pg_instruction& x);

  // --- arithmetic -----------------------------------------------------------------------------
  /// The opcode of a two-operand op on representation r, or 0 when it has none.
  static uint8_t binary_opcode(uint32_t o, const Repr& r);

  void alu(uint32_t i, const pg_instruction& x, uint32_t n);
  void push_zero(ValType t);

  const pg_kernel_program& p_;
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<std::vector<LaneRef>> lanes_;  ///< per instruction: where each lane is
  std::vector<uint32_t> vec_;                ///< per instruction: its v128 local, or kNone
  std::vector<std::vector<LaneRef>> splat_;  ///< per instruction: the scalar all lanes equal
  std::vector<uint32_t> disp_;               ///< per INDEX: its displacement in bytes
  std::vector<bool> nonneg_;                 ///< per instruction: known to be >= 0
  /// Largest displacement folded into memarg offsets (larger ones are added in the address).
  static constexpr int64_t kMaxDisplacement = int64_t{1} << 30;
  /// An address ptr + base * size computed in an enclosing scope, reusable while it is open.
  struct Address {
    uint32_t ptr, base, local, depth;
  };
  std::vector<Address> addresses_;
  /// Per instruction a: the addresses ptr + a * size computed after it (plan_hoisted_addresses).
  struct Hoisted {
    uint32_t ptr, size, local;
  };
  std::vector<std::vector<Hoisted>> hoisted_;
  /// Per INDEX: its offset's operand from an enclosing scope (a) and the other (b), or kNone.
  std::vector<std::pair<uint32_t, uint32_t>> split_;
  /// b * size (as i32) computed in an enclosing scope, reusable while it is open.
  struct Scaled {
    uint32_t base, size, local, depth;
  };
  std::vector<Scaled> scaled_;
  uint32_t depth_ = 0;  ///< loops and IFs open around the current instruction
  /// Per INDEX into a register array held in locals: 1 + the array's index in regs_, and the
  /// element offset; {0, 0} for any other instruction.
  std::vector<std::pair<uint32_t, uint32_t>> reg_slot_;
  std::vector<ValType> locals_;  ///< declared locals after the parameters
  uint32_t nparams_;
  uint32_t index_[3] = {0, 0, 0};
  uint32_t scratch_bytes_ = 0;
  bool group_memory_ = false;
  ByteWriter code_;
};

template <class PushLane>
void FunctionWriter::by_lanes(uint32_t i, uint32_t dt, uint32_t n, PushLane&& push) {
  if (simd_shape(dt, n)) {
    uint32_t v = new_local(ValType::V128);
    for (uint32_t l = 0; l < n; ++l) {
      push(l);
      to_lane(dt, n);
      if (l == 0)
        splat(dt, n);
      else
        replace(dt, n, l);
    }
    set(v);
    set_vector(i, v, dt, n);
    return;
  }
  std::vector<uint32_t> out;
  for (uint32_t l = 0; l < n; ++l) {
    out.push_back(new_local(repr_of(dt).type));
    push(l);
    set(out.back());
  }
  set_scalars(i, out);
}

}  // namespace polygrad::wasm::detail

#endif  // POLYGRAD_WASM_FUNCTION_WRITER_HPP
