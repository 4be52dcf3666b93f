// Kernel program -> WebAssembly module. Every value lives in WebAssembly locals, one local per
// lane (a vector is its lanes; VECTORIZE, GEP and a splat CONST only name existing locals), and
// each instruction reads its sources with local.get and writes its result with local.set.
// Integers narrower than 32 bits are held in an i32, sign- or zero-extended after every
// operation that could leave the range, so comparisons, division and shifts need no fix-up.
#include "renderer.hpp"

#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include <vector>

#include "wasm_encoder.hpp"

namespace polygrad::wasm {
namespace {

using sdk::fail;

/// How a dtype is held in WebAssembly.
struct Repr {
  ValType type = ValType::I32;
  uint32_t bytes = 0;  ///< element size in memory
  bool is_float = false, is_signed = false, is_bool = false;
};

Repr repr_of(uint32_t dt) {
  switch (dt) {
    case PG_DTYPE_BOOL:
      return {ValType::I32, 1, false, false, true};
    case PG_DTYPE_INT8:
      return {ValType::I32, 1, false, true, false};
    case PG_DTYPE_INT16:
      return {ValType::I32, 2, false, true, false};
    case PG_DTYPE_INT32:
      return {ValType::I32, 4, false, true, false};
    case PG_DTYPE_INT64:
      return {ValType::I64, 8, false, true, false};
    case PG_DTYPE_UINT8:
      return {ValType::I32, 1, false, false, false};
    case PG_DTYPE_UINT16:
      return {ValType::I32, 2, false, false, false};
    case PG_DTYPE_UINT32:
      return {ValType::I32, 4, false, false, false};
    case PG_DTYPE_UINT64:
      return {ValType::I64, 8, false, false, false};
    case PG_DTYPE_FLOAT32:
      return {ValType::F32, 4, true, true, false};
    case PG_DTYPE_FLOAT64:
      return {ValType::F64, 8, true, true, false};
    default:
      fail(PG_ERR_UNSUPPORTED,
           std::string("wasm: dtype ") + sdk::dtype_name(dt) + " is not supported");
  }
}

uint32_t log2_of(uint32_t bytes) {
  return bytes >= 8 ? 3 : bytes >= 4 ? 2 : bytes >= 2 ? 1 : 0;
}

/// Function parameters after the buffers and scalars.
constexpr uint32_t kScratchParam = 0, kCountParams = 1, kLocalSizeParams = 4, kExtraParams = 7;

class FunctionWriter {
 public:
  explicit FunctionWriter(const pg_kernel_program& p)
      : p_(p),
        lanes_(p.instruction_count),
        nparams_(p.buffer_count + p.scalar_count + kExtraParams) {}

  /// The function body (locals and code) and the scratch bytes it needs.
  ByteWriter body() {
    for (int d = 0; d < 3; ++d) index_[d] = new_local(ValType::I32);
    // Grid loops, dim 2 outermost: idx_d counts 0 .. n_d - 1.
    for (int d = 2; d >= 0; --d) {
      const_i32(0);
      set(index_[d]);
      open_loop(index_[d], ValType::I32, param(kCountParams + d), false);
    }
    for (uint32_t i = 0; i < p_.instruction_count; ++i) instruction(i);
    for (int d = 0; d < 3; ++d) close_loop(index_[d], ValType::I32);
    code_.u8(op::end);

    ByteWriter out;
    // Locals, run-length encoded by type.
    std::vector<std::pair<uint32_t, ValType>> runs;
    for (ValType t : locals_) {
      if (!runs.empty() && runs.back().second == t)
        ++runs.back().first;
      else
        runs.push_back({1, t});
    }
    out.uleb(runs.size());
    for (auto& [n, t] : runs) {
      out.uleb(n);
      out.u8(static_cast<uint8_t>(t));
    }
    out.append(code_);
    return out;
  }
  uint32_t scratch_bytes() const { return scratch_bytes_; }
  bool group_memory() const { return group_memory_; }

 private:
  // --- locals and small emitters -------------------------------------------------------------
  uint32_t new_local(ValType t) {
    locals_.push_back(t);
    return nparams_ + static_cast<uint32_t>(locals_.size()) - 1;
  }
  uint32_t param(uint32_t extra) const { return p_.buffer_count + p_.scalar_count + extra; }
  void get(uint32_t local) {
    code_.u8(op::local_get);
    code_.uleb(local);
  }
  void set(uint32_t local) {
    code_.u8(op::local_set);
    code_.uleb(local);
  }
  void const_i32(int32_t v) {
    code_.u8(op::i32_const);
    code_.sleb(v);
  }
  /// block; loop; exit unless var < end. `end` is a local of type t.
  void open_loop(uint32_t var, ValType t, uint32_t end, bool is_signed) {
    code_.u8(op::block);
    code_.u8(0x40);
    code_.u8(op::loop);
    code_.u8(0x40);
    get(var);
    get(end);
    if (t == ValType::I64) {
      code_.u8(is_signed ? op::i64_lt_s : op::i64_lt_u);
    } else {
      code_.u8(is_signed ? op::i32_lt_s : op::i32_lt_u);
    }
    code_.u8(op::i32_eqz);
    code_.u8(op::br_if);
    code_.uleb(1);
  }
  /// var += 1; continue; end loop; end block.
  void close_loop(uint32_t var, ValType t) {
    get(var);
    if (t == ValType::I64) {
      code_.u8(op::i64_const);
      code_.sleb(1);
      code_.u8(op::i64_add);
    } else {
      const_i32(1);
      code_.u8(op::i32_add);
    }
    set(var);
    code_.u8(op::br);
    code_.uleb(0);
    code_.u8(op::end);
    code_.u8(op::end);
  }
  /// Brings the i32 on the stack into dtype dt's range (narrow ints, bool).
  void normalize(uint32_t dt) {
    switch (dt) {
      case PG_DTYPE_BOOL:
        const_i32(0);
        code_.u8(op::i32_ne);
        break;
      case PG_DTYPE_INT8:
        code_.u8(op::i32_extend8_s);
        break;
      case PG_DTYPE_INT16:
        code_.u8(op::i32_extend16_s);
        break;
      case PG_DTYPE_UINT8:
        const_i32(0xFF);
        code_.u8(op::i32_and);
        break;
      case PG_DTYPE_UINT16:
        const_i32(0xFFFF);
        code_.u8(op::i32_and);
        break;
      default:
        break;
    }
  }
  const pg_instruction& in(uint32_t i) const { return p_.instructions[i]; }
  uint32_t src(const pg_instruction& x, uint32_t k) const { return p_.operands[x.src_start + k]; }
  /// The local holding lane `l` of instruction i (a scalar broadcasts to every lane).
  uint32_t lane(uint32_t i, uint32_t l) const {
    const auto& v = lanes_[i];
    if (v.empty())
      fail(PG_ERR_INVALID_ARGUMENT, "wasm: instruction " + std::to_string(i) + " (" +
                                        sdk::op_name(in(i).op) + ") has no value");
    return v[v.size() == 1 ? 0 : l];
  }
  [[noreturn]] void unsupported(uint32_t i, const std::string& why) const {
    fail(PG_ERR_UNSUPPORTED, "wasm: instruction " + std::to_string(i) + " (" +
                                 sdk::op_name(in(i).op) + " " + sdk::dtype_name(in(i).dtype) +
                                 "): " + why);
  }

  // --- instructions ---------------------------------------------------------------------------
  void instruction(uint32_t i) {
    const pg_instruction& x = in(i);
    const uint32_t n = x.vcount == 0 ? 1 : x.vcount;
    std::vector<uint32_t>& out = lanes_[i];
    switch (x.op) {
      case PG_OP_PARAM_BUFFER:
        out = {static_cast<uint32_t>(x.arg.i)};
        return;
      case PG_OP_PARAM_SCALAR:
        return param_scalar(i, x);
      case PG_OP_DEFINE_REG:
      case PG_OP_DEFINE_LOCAL: {
        if (x.op == PG_OP_DEFINE_LOCAL) group_memory_ = true;
        uint64_t bytes = uint64_t(repr_of(x.dtype).bytes) * uint64_t(x.arg.i);
        uint32_t local = new_local(ValType::I32);
        get(param(kScratchParam));
        const_i32(static_cast<int32_t>(reserve_scratch(bytes, i)));
        code_.u8(op::i32_add);
        set(local);
        out = {local};
        return;
      }
      case PG_OP_SPECIAL:
        return special(i, x);
      case PG_OP_CONST:
        return constant(i, x);
      case PG_OP_RANGE: {
        Repr r = repr_of(x.dtype);
        uint32_t var = new_local(r.type);
        if (r.type == ValType::I64) {
          code_.u8(op::i64_const);
          code_.sleb(0);
        } else {
          const_i32(0);
        }
        set(var);
        open_loop(var, r.type, lane(src(x, 0), 0), r.is_signed);
        out = {var};
        return;
      }
      case PG_OP_END_RANGE: {
        uint32_t r = src(x, 0);
        close_loop(lane(r, 0), repr_of(in(r).dtype).type);
        return;
      }
      case PG_OP_IF:
        get(lane(src(x, 0), 0));
        code_.u8(op::if_);
        code_.u8(0x40);
        return;
      case PG_OP_END_IF:
        code_.u8(op::end);
        return;
      case PG_OP_BARRIER:
        group_memory_ = true;
        return;  // one thread per group: nothing to wait for
      case PG_OP_INDEX: {
        uint32_t local = new_local(ValType::I32);
        get(lane(src(x, 0), 0));
        uint32_t off = src(x, 1);
        get(lane(off, 0));
        if (repr_of(in(off).dtype).type == ValType::I64) code_.u8(op::i32_wrap_i64);
        uint32_t size = repr_of(x.dtype).bytes;
        if (size != 1) {
          const_i32(static_cast<int32_t>(size));
          code_.u8(op::i32_mul);
        }
        code_.u8(op::i32_add);
        set(local);
        out = {local};
        return;
      }
      case PG_OP_LOAD:
        return load(i, x, n);
      case PG_OP_STORE:
        return store(i, x);
      case PG_OP_VECTORIZE:
        for (uint32_t k = 0; k < x.src_count; ++k) out.push_back(lane(src(x, k), 0));
        return;
      case PG_OP_GEP: {
        uint32_t s = src(x, 0);
        if (x.arg.i < 0 || uint64_t(x.arg.i) >= lanes_[s].size())
          fail(PG_ERR_INVALID_ARGUMENT, "wasm: instruction " + std::to_string(i) + " (GEP): lane " +
                                            std::to_string(x.arg.i) + " out of range");
        out = {lanes_[s][x.arg.i]};
        return;
      }
      case PG_OP_CAST:
      case PG_OP_BITCAST:
        return convert(i, x, n);
      case PG_OP_EXP2:
      case PG_OP_LOG2:
      case PG_OP_SIN:
        unsupported(i,
                    "WebAssembly has no such instruction; the host decomposes it for this "
                    "device (PG_CAP_DECOMPOSE_TRANSCENDENTAL)");
      default:
        break;
    }
    if (x.op >= PG_OP_FIRST_ISA2)
      unsupported(i, "the wasm renderer has no tensor cores or atomics (op_support says so)");
    alu(i, x, n);
  }

  uint32_t reserve_scratch(uint64_t bytes, uint32_t i) {
    uint64_t at = (uint64_t(scratch_bytes_) + 15) & ~uint64_t(15);
    if (at + bytes > (uint64_t(1) << 30)) unsupported(i, "per-thread arrays larger than 1 GiB");
    scratch_bytes_ = static_cast<uint32_t>(at + bytes);
    return static_cast<uint32_t>(at);
  }

  void param_scalar(uint32_t i, const pg_instruction& x) {
    Repr r = repr_of(x.dtype);
    uint32_t local = new_local(r.type);
    get(p_.buffer_count + static_cast<uint32_t>(x.arg.i));
    switch (x.dtype) {
      case PG_DTYPE_FLOAT64:
        code_.u8(op::f64_reinterpret_i64);
        break;
      case PG_DTYPE_FLOAT32:
        code_.u8(op::f64_reinterpret_i64);
        code_.u8(op::f32_demote_f64);
        break;
      case PG_DTYPE_INT64:
      case PG_DTYPE_UINT64:
        break;
      case PG_DTYPE_BOOL:
        code_.u8(op::i64_const);
        code_.sleb(0);
        code_.u8(op::i64_ne);
        break;
      default:
        code_.u8(op::i32_wrap_i64);
        normalize(x.dtype);
    }
    set(local);
    lanes_[i] = {local};
  }

  void special(uint32_t i, const pg_instruction& x) {
    if (x.arg.i < 0 || x.arg.i > 2)
      fail(PG_ERR_INVALID_ARGUMENT,
           "wasm: instruction " + std::to_string(i) + " (SPECIAL): dim " + std::to_string(x.arg.i));
    const uint32_t d = static_cast<uint32_t>(x.arg.i);
    Repr r = repr_of(x.dtype);
    uint32_t local = new_local(r.type);
    get(index_[d]);
    if (x.arg2 == PG_SPECIAL_GROUP || x.arg2 == PG_SPECIAL_LOCAL) {
      get(param(kLocalSizeParams + d));
      code_.u8(x.arg2 == PG_SPECIAL_GROUP ? op::i32_div_u : op::i32_rem_u);
    } else if (x.arg2 != PG_SPECIAL_GLOBAL) {
      fail(PG_ERR_INVALID_ARGUMENT,
           "wasm: instruction " + std::to_string(i) + " (SPECIAL): unknown kind");
    }
    if (r.type == ValType::I64)
      code_.u8(op::i64_extend_i32_u);
    else if (r.type != ValType::I32)
      unsupported(i, "a launch index is an integer");
    set(local);
    lanes_[i] = {local};
  }

  void constant(uint32_t i, const pg_instruction& x) {
    Repr r = repr_of(x.dtype);
    uint32_t local = new_local(r.type);
    push_const(x.dtype, x.arg);
    set(local);
    lanes_[i] = std::vector<uint32_t>(x.vcount ? x.vcount : 1, local);
  }
  void push_const(uint32_t dt, pg_arg a) {
    switch (dt) {
      case PG_DTYPE_FLOAT32:
        code_.u8(op::f32_const);
        code_.f32(static_cast<float>(a.f));
        return;
      case PG_DTYPE_FLOAT64:
        code_.u8(op::f64_const);
        code_.f64(a.f);
        return;
      case PG_DTYPE_INT64:
      case PG_DTYPE_UINT64:
        code_.u8(op::i64_const);
        code_.sleb(a.i);
        return;
      case PG_DTYPE_BOOL:
        const_i32(a.i != 0);
        return;
      case PG_DTYPE_INT8:
        const_i32(static_cast<int8_t>(a.i));
        return;
      case PG_DTYPE_INT16:
        const_i32(static_cast<int16_t>(a.i));
        return;
      case PG_DTYPE_UINT8:
        const_i32(static_cast<uint8_t>(a.i));
        return;
      case PG_DTYPE_UINT16:
        const_i32(static_cast<uint16_t>(a.i));
        return;
      default:
        const_i32(static_cast<int32_t>(static_cast<uint32_t>(a.i)));
        return;
    }
  }

  // --- memory ---------------------------------------------------------------------------------
  void load_lane(uint32_t dt, uint32_t ptr, uint32_t l) {
    Repr r = repr_of(dt);
    get(ptr);
    uint8_t o = op::i32_load;
    switch (dt) {
      case PG_DTYPE_BOOL:
      case PG_DTYPE_UINT8:
        o = op::i32_load8_u;
        break;
      case PG_DTYPE_INT8:
        o = op::i32_load8_s;
        break;
      case PG_DTYPE_INT16:
        o = op::i32_load16_s;
        break;
      case PG_DTYPE_UINT16:
        o = op::i32_load16_u;
        break;
      case PG_DTYPE_INT64:
      case PG_DTYPE_UINT64:
        o = op::i64_load;
        break;
      case PG_DTYPE_FLOAT32:
        o = op::f32_load;
        break;
      case PG_DTYPE_FLOAT64:
        o = op::f64_load;
        break;
      default:
        break;
    }
    code_.u8(o);
    code_.memarg(log2_of(r.bytes), uint64_t(l) * r.bytes);
    if (dt == PG_DTYPE_BOOL) normalize(dt);  // any non-zero byte is true
  }
  void store_lane(uint32_t dt, uint32_t ptr, uint32_t value, uint32_t l) {
    Repr r = repr_of(dt);
    get(ptr);
    get(value);
    uint8_t o = op::i32_store;
    switch (r.bytes) {
      case 1:
        o = op::i32_store8;
        break;
      case 2:
        o = op::i32_store16;
        break;
      case 8:
        o = r.is_float ? op::f64_store : op::i64_store;
        break;
      default:
        o = r.is_float ? op::f32_store : op::i32_store;
        break;
    }
    code_.u8(o);
    code_.memarg(log2_of(r.bytes), uint64_t(l) * r.bytes);
  }

  void load(uint32_t i, const pg_instruction& x, uint32_t n) {
    Repr r = repr_of(x.dtype);
    uint32_t ptr = lane(src(x, 0), 0);
    std::vector<uint32_t> out;
    for (uint32_t l = 0; l < n; ++l) out.push_back(new_local(r.type));
    const bool gated = x.src_count == 3;
    if (gated) {
      get(lane(src(x, 2), 0));
      code_.u8(op::if_);
      code_.u8(0x40);
    }
    for (uint32_t l = 0; l < n; ++l) {
      load_lane(x.dtype, ptr, l);
      set(out[l]);
    }
    if (gated) {
      code_.u8(op::else_);
      for (uint32_t l = 0; l < n; ++l) {
        get(lane(src(x, 1), l));
        set(out[l]);
      }
      code_.u8(op::end);
    }
    lanes_[i] = out;
  }

  void store(uint32_t i, const pg_instruction& x) {
    uint32_t ptr = lane(src(x, 0), 0), value = src(x, 1);
    const uint32_t dt = in(src(x, 0)).dtype;
    const uint32_t n = static_cast<uint32_t>(lanes_[value].size());
    const bool gated = x.src_count == 3;
    if (gated) {
      get(lane(src(x, 2), 0));
      code_.u8(op::if_);
      code_.u8(0x40);
    }
    for (uint32_t l = 0; l < n; ++l) store_lane(dt, ptr, lane(value, l), l);
    if (gated) code_.u8(op::end);
    (void)i;
  }

  // --- conversions ----------------------------------------------------------------------------
  void convert(uint32_t i, const pg_instruction& x, uint32_t n) {
    const uint32_t s = src(x, 0);
    const uint32_t from = in(s).dtype, to = x.dtype;
    const uint32_t sn = static_cast<uint32_t>(lanes_[s].size());
    Repr rt = repr_of(to);
    std::vector<uint32_t> out;
    if (x.op == PG_OP_BITCAST && sn != n) {
      // Lanes change (e.g. 4 x int8 -> int32): through scratch memory.
      Repr rf = repr_of(from);
      uint64_t total = uint64_t(rf.bytes) * sn;
      if (total != uint64_t(rt.bytes) * n) unsupported(i, "BITCAST between different sizes");
      uint32_t at = new_local(ValType::I32);
      get(param(kScratchParam));
      const_i32(static_cast<int32_t>(reserve_scratch(total, i)));
      code_.u8(op::i32_add);
      set(at);
      for (uint32_t l = 0; l < sn; ++l) store_lane(from, at, lane(s, l), l);
      for (uint32_t l = 0; l < n; ++l) {
        out.push_back(new_local(rt.type));
        load_lane(to, at, l);
        set(out.back());
      }
      lanes_[i] = out;
      return;
    }
    for (uint32_t l = 0; l < n; ++l) {
      out.push_back(new_local(rt.type));
      get(lane(s, l));
      if (x.op == PG_OP_CAST)
        cast(i, from, to);
      else
        bitcast(i, from, to);
      set(out.back());
    }
    lanes_[i] = out;
  }

  void cast(uint32_t i, uint32_t from, uint32_t to) {
    Repr f = repr_of(from), t = repr_of(to);
    if (to == PG_DTYPE_BOOL) {
      switch (f.type) {
        case ValType::F32:
          code_.u8(op::f32_const);
          code_.f32(0.0f);
          code_.u8(op::f32_ne);
          return;
        case ValType::F64:
          code_.u8(op::f64_const);
          code_.f64(0.0);
          code_.u8(op::f64_ne);
          return;
        case ValType::I64:
          code_.u8(op::i64_const);
          code_.sleb(0);
          code_.u8(op::i64_ne);
          return;
        default:
          normalize(PG_DTYPE_BOOL);
          return;
      }
    }
    if (t.is_float) {
      const bool to64 = t.type == ValType::F64;
      switch (f.type) {
        case ValType::F32:
          if (to64) code_.u8(op::f64_promote_f32);
          return;
        case ValType::F64:
          if (!to64) code_.u8(op::f32_demote_f64);
          return;
        case ValType::I64:
          code_.u8(to64 ? (f.is_signed ? op::f64_convert_i64_s : op::f64_convert_i64_u)
                        : (f.is_signed ? op::f32_convert_i64_s : op::f32_convert_i64_u));
          return;
        default:
          code_.u8(to64 ? (f.is_signed ? op::f64_convert_i32_s : op::f64_convert_i32_u)
                        : (f.is_signed ? op::f32_convert_i32_s : op::f32_convert_i32_u));
          return;
      }
    }
    // To an integer.
    if (f.is_float) {
      const bool from64 = f.type == ValType::F64;
      if (t.type == ValType::I64) {
        code_.misc(from64 ? (t.is_signed ? op::i64_trunc_sat_f64_s : op::i64_trunc_sat_f64_u)
                          : (t.is_signed ? op::i64_trunc_sat_f32_s : op::i64_trunc_sat_f32_u));
      } else if (t.bytes == 4) {
        code_.misc(from64 ? (t.is_signed ? op::i32_trunc_sat_f64_s : op::i32_trunc_sat_f64_u)
                          : (t.is_signed ? op::i32_trunc_sat_f32_s : op::i32_trunc_sat_f32_u));
      } else {
        code_.misc(from64 ? op::i32_trunc_sat_f64_s : op::i32_trunc_sat_f32_s);
        normalize(to);
      }
      return;
    }
    if (f.type == ValType::I64 && t.type == ValType::I32) {
      code_.u8(op::i32_wrap_i64);
      normalize(to);
    } else if (f.type == ValType::I32 && t.type == ValType::I64) {
      code_.u8(f.is_signed ? op::i64_extend_i32_s : op::i64_extend_i32_u);
    } else if (t.type == ValType::I32) {
      normalize(to);
    }
    (void)i;
  }

  void bitcast(uint32_t i, uint32_t from, uint32_t to) {
    Repr f = repr_of(from), t = repr_of(to);
    if (f.bytes != t.bytes) unsupported(i, "BITCAST between different sizes");
    if (f.type == t.type) {
      if (t.type == ValType::I32) normalize(to);
      return;
    }
    switch (t.type) {
      case ValType::F32:
        code_.u8(op::f32_reinterpret_i32);
        return;
      case ValType::F64:
        code_.u8(op::f64_reinterpret_i64);
        return;
      case ValType::I32:
        code_.u8(op::i32_reinterpret_f32);
        return;
      default:
        code_.u8(op::i64_reinterpret_f64);
        return;
    }
  }

  // --- arithmetic -----------------------------------------------------------------------------
  /// The opcode of a two-operand op on representation r, or 0 when it has none.
  static uint8_t binary_opcode(uint32_t o, const Repr& r) {
    const bool s = r.is_signed;
    switch (r.type) {
      case ValType::I32:
        switch (o) {
          case PG_OP_ADD:
            return op::i32_add;
          case PG_OP_SUB:
            return op::i32_sub;
          case PG_OP_MUL:
            return op::i32_mul;
          case PG_OP_IDIV:
            return s ? op::i32_div_s : op::i32_div_u;
          case PG_OP_MOD:
            return s ? op::i32_rem_s : op::i32_rem_u;
          case PG_OP_AND:
            return op::i32_and;
          case PG_OP_OR:
            return op::i32_or;
          case PG_OP_XOR:
            return op::i32_xor;
          case PG_OP_SHL:
            return op::i32_shl;
          case PG_OP_SHR:
            return s ? op::i32_shr_s : op::i32_shr_u;
          case PG_OP_CMPLT:
            return s ? op::i32_lt_s : op::i32_lt_u;
          case PG_OP_CMPNE:
            return op::i32_ne;
          case PG_OP_CMPEQ:
            return op::i32_eq;
          default:
            return 0;
        }
      case ValType::I64:
        switch (o) {
          case PG_OP_ADD:
            return op::i64_add;
          case PG_OP_SUB:
            return op::i64_sub;
          case PG_OP_MUL:
            return op::i64_mul;
          case PG_OP_IDIV:
            return s ? op::i64_div_s : op::i64_div_u;
          case PG_OP_MOD:
            return s ? op::i64_rem_s : op::i64_rem_u;
          case PG_OP_AND:
            return op::i64_and;
          case PG_OP_OR:
            return op::i64_or;
          case PG_OP_XOR:
            return op::i64_xor;
          case PG_OP_SHL:
            return op::i64_shl;
          case PG_OP_SHR:
            return s ? op::i64_shr_s : op::i64_shr_u;
          case PG_OP_CMPLT:
            return s ? op::i64_lt_s : op::i64_lt_u;
          case PG_OP_CMPNE:
            return op::i64_ne;
          case PG_OP_CMPEQ:
            return op::i64_eq;
          default:
            return 0;
        }
      case ValType::F32:
        switch (o) {
          case PG_OP_ADD:
            return op::f32_add;
          case PG_OP_SUB:
            return op::f32_sub;
          case PG_OP_MUL:
            return op::f32_mul;
          case PG_OP_FDIV:
            return op::f32_div;
          case PG_OP_MAX:
            return op::f32_max;  // NaN if either is NaN
          case PG_OP_CMPLT:
            return op::f32_lt;
          case PG_OP_CMPNE:
            return op::f32_ne;
          case PG_OP_CMPEQ:
            return op::f32_eq;
          default:
            return 0;
        }
      default:
        switch (o) {
          case PG_OP_ADD:
            return op::f64_add;
          case PG_OP_SUB:
            return op::f64_sub;
          case PG_OP_MUL:
            return op::f64_mul;
          case PG_OP_FDIV:
            return op::f64_div;
          case PG_OP_MAX:
            return op::f64_max;
          case PG_OP_CMPLT:
            return op::f64_lt;
          case PG_OP_CMPNE:
            return op::f64_ne;
          case PG_OP_CMPEQ:
            return op::f64_eq;
          default:
            return 0;
        }
    }
  }

  void alu(uint32_t i, const pg_instruction& x, uint32_t n) {
    const uint32_t o = x.op;
    // The operands' dtype: a comparison's result is bool, its sources are not.
    const uint32_t odt = (o == PG_OP_CMPLT || o == PG_OP_CMPNE || o == PG_OP_CMPEQ)
                             ? in(src(x, 0)).dtype
                         : o == PG_OP_WHERE ? x.dtype
                                            : x.dtype;
    if (!sdk::op_defined_on(o, odt))
      unsupported(i, "the op is not defined on " + std::string(sdk::dtype_name(odt)));
    Repr r = repr_of(odt);
    Repr rt = repr_of(x.dtype);
    std::vector<uint32_t> out;
    for (uint32_t l = 0; l < n; ++l) {
      out.push_back(new_local(rt.type));
      auto a = [&](uint32_t k) { get(lane(src(x, k), l)); };
      switch (o) {
        case PG_OP_NEG:
          if (r.is_float) {
            a(0);
            code_.u8(r.type == ValType::F32 ? op::f32_neg : op::f64_neg);
          } else {
            push_zero(r.type);
            a(0);
            code_.u8(r.type == ValType::I64 ? op::i64_sub : op::i32_sub);
            normalize(odt);
          }
          break;
        case PG_OP_NOT:
          a(0);
          if (odt == PG_DTYPE_BOOL) {
            code_.u8(op::i32_eqz);
          } else if (r.type == ValType::I64) {
            code_.u8(op::i64_const);
            code_.sleb(-1);
            code_.u8(op::i64_xor);
          } else {
            const_i32(-1);
            code_.u8(op::i32_xor);
            normalize(odt);
          }
          break;
        case PG_OP_RECIP:
          if (r.type == ValType::F32) {
            code_.u8(op::f32_const);
            code_.f32(1.0f);
          } else {
            code_.u8(op::f64_const);
            code_.f64(1.0);
          }
          a(0);
          code_.u8(r.type == ValType::F32 ? op::f32_div : op::f64_div);
          break;
        case PG_OP_SQRT:
          a(0);
          code_.u8(r.type == ValType::F32 ? op::f32_sqrt : op::f64_sqrt);
          break;
        case PG_OP_TRUNC:
          a(0);
          code_.u8(r.type == ValType::F32 ? op::f32_trunc : op::f64_trunc);
          break;
        case PG_OP_MAX:
          if (r.is_float) {
            a(0);
            a(1);
            code_.u8(binary_opcode(o, r));
          } else {
            a(0);
            a(1);
            a(0);
            a(1);
            code_.u8(r.type == ValType::I64 ? (r.is_signed ? op::i64_gt_s : op::i64_gt_u)
                                            : (r.is_signed ? op::i32_gt_s : op::i32_gt_u));
            code_.u8(op::select);
          }
          break;
        case PG_OP_WHERE:
          a(1);
          a(2);
          a(0);
          code_.u8(op::select);
          break;
        case PG_OP_MULACC: {
          a(0);
          a(1);
          code_.u8(binary_opcode(PG_OP_MUL, r));
          if (!r.is_float) normalize(odt);
          a(2);
          code_.u8(binary_opcode(PG_OP_ADD, r));
          if (!r.is_float) normalize(odt);
          break;
        }
        default: {
          uint8_t code = binary_opcode(o, r);
          if (code == 0 || x.src_count != 2) unsupported(i, "no WebAssembly instruction for it");
          a(0);
          a(1);
          code_.u8(code);
          if (!r.is_float && (o == PG_OP_ADD || o == PG_OP_SUB || o == PG_OP_MUL ||
                              o == PG_OP_SHL || o == PG_OP_IDIV))
            normalize(odt);
        }
      }
      set(out.back());
    }
    lanes_[i] = out;
  }
  void push_zero(ValType t) {
    if (t == ValType::I64) {
      code_.u8(op::i64_const);
      code_.sleb(0);
    } else {
      const_i32(0);
    }
  }

  const pg_kernel_program& p_;
  std::vector<std::vector<uint32_t>> lanes_;  ///< per instruction: the local of each lane
  std::vector<ValType> locals_;               ///< declared locals after the parameters
  uint32_t nparams_;
  uint32_t index_[3] = {0, 0, 0};
  uint32_t scratch_bytes_ = 0;
  bool group_memory_ = false;
  ByteWriter code_;
};

void export_global(ByteWriter& globals, ByteWriter& exports, uint32_t index, const char* name,
                   uint32_t value) {
  globals.u8(static_cast<uint8_t>(ValType::I32));
  globals.u8(0);  // immutable
  globals.u8(op::i32_const);
  globals.sleb(static_cast<int32_t>(value));
  globals.u8(op::end);
  exports.name(name);
  exports.u8(0x03);  // global
  exports.uleb(index);
}

}  // namespace

bool op_supported(uint32_t op, uint32_t dtype, uint32_t vcount) {
  if (op >= PG_OP_FIRST_ISA2 || op == PG_OP_EXP2 || op == PG_OP_LOG2 || op == PG_OP_SIN)
    return false;
  if (dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16) return false;
  return vcount >= 1 && vcount <= 16;
}

std::string render_module(const pg_kernel_program& program) {
  sdk::check_program(program);
  FunctionWriter fn(program);
  ByteWriter body = fn.body();

  ByteWriter out;
  out.raw("\0asm", 4);
  const uint8_t version[4] = {1, 0, 0, 0};
  out.raw(version, 4);

  ByteWriter types;  // one function type
  types.uleb(1);
  types.u8(0x60);
  types.uleb(program.buffer_count + program.scalar_count + kExtraParams);
  for (uint32_t k = 0; k < program.buffer_count; ++k) types.u8(uint8_t(ValType::I32));
  for (uint32_t k = 0; k < program.scalar_count; ++k) types.u8(uint8_t(ValType::I64));
  for (uint32_t k = 0; k < kExtraParams; ++k) types.u8(uint8_t(ValType::I32));
  types.uleb(0);  // no results
  out.section(SectionId::Type, types);

  ByteWriter imports;  // env.memory, at least 0 pages, no maximum
  imports.uleb(1);
  imports.name("env");
  imports.name("memory");
  imports.u8(0x02);
  imports.u8(0x00);
  imports.uleb(0);
  out.section(SectionId::Import, imports);

  ByteWriter functions;
  functions.uleb(1);
  functions.uleb(0);
  out.section(SectionId::Function, functions);

  ByteWriter globals, exports;
  globals.uleb(4);
  exports.uleb(5);
  exports.name(program.name ? program.name : "kernel");
  exports.u8(0x00);  // function
  exports.uleb(0);
  export_global(globals, exports, 0, kBuffersGlobal, program.buffer_count);
  export_global(globals, exports, 1, kScalarsGlobal, program.scalar_count);
  export_global(globals, exports, 2, kScratchGlobal, fn.scratch_bytes());
  export_global(globals, exports, 3, kGroupMemoryGlobal, fn.group_memory() ? 1 : 0);
  out.section(SectionId::Global, globals);
  out.section(SectionId::Export, exports);

  ByteWriter code;
  code.uleb(1);
  code.uleb(body.size());
  code.append(body);
  out.section(SectionId::Code, code);
  return out.take();
}

}  // namespace polygrad::wasm
