// FunctionWriter (function_writer.hpp): conversions (CAST, BITCAST) and arithmetic.
#include "function_writer.hpp"

#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

namespace polygrad::wasm::detail {

using sdk::fail;

void FunctionWriter::convert(uint32_t i, const pg_instruction& x, uint32_t n) {
  const uint32_t s = src(x, 0);
  const uint32_t from = in(s).dtype, to = x.dtype;
  const uint32_t sn = lane_count(s);
  if (simd_convert(i, x, n)) return;
  if (x.op == PG_OP_BITCAST && sn != n) {
    // Lanes change (e.g. 4 x int8 -> int32): through scratch memory.
    Repr rf = repr_of(from), rt = repr_of(to);
    uint64_t total = uint64_t(rf.bytes) * sn;
    if (total != uint64_t(rt.bytes) * n) unsupported(i, "BITCAST between different sizes");
    uint32_t at = new_local(ValType::I32);
    get(param(kScratchParam));
    const_i32(static_cast<int32_t>(reserve_scratch(total, i)));
    code_.u8(op::i32_add);
    set(at);
    for (uint32_t l = 0; l < sn; ++l) store_lane(from, at, s, l, l);
    by_lanes(i, to, n, [&](uint32_t l) { load_lane(to, at, l); });
    return;
  }
  by_lanes(i, to, n, [&](uint32_t l) {
    push_lane(s, l);
    if (x.op == PG_OP_CAST)
      cast(i, from, to);
    else
      bitcast(i, from, to);
  });
}

void FunctionWriter::cast(uint32_t i, uint32_t from, uint32_t to) {
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
    } else if (t.bytes == 4 && t.is_signed) {
      code_.misc(from64 ? op::i32_trunc_sat_f64_s : op::i32_trunc_sat_f32_s);
    } else if (t.bytes == 4) {
      // To uint32 through int64 and a wrap, as torch and numpy do: -3.7 -> -3 -> 2^32 - 3.
      code_.misc(from64 ? op::i64_trunc_sat_f64_s : op::i64_trunc_sat_f32_s);
      code_.u8(op::i32_wrap_i64);
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

void FunctionWriter::bitcast(uint32_t i, uint32_t from, uint32_t to) {
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

uint8_t FunctionWriter::binary_opcode(uint32_t o, const Repr& r) {
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

void FunctionWriter::alu(uint32_t i, const pg_instruction& x, uint32_t n) {
  const uint32_t o = x.op;
  // The operands' dtype: a comparison's result is bool, its sources are not.
  const uint32_t odt =
      (o == PG_OP_CMPLT || o == PG_OP_CMPNE || o == PG_OP_CMPEQ) ? in(src(x, 0)).dtype : x.dtype;
  if (!sdk::op_defined_on(o, odt))
    unsupported(i, "the op is not defined on " + std::string(sdk::dtype_name(odt)));
  if (simd_shape(x.dtype, n) && simd_alu(i, x, n)) return;
  Repr r = repr_of(odt);
  by_lanes(i, x.dtype, n, [&](uint32_t l) {
    auto a = [&](uint32_t k) { push_lane(src(x, k), l); };
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
        if (!r.is_float && (o == PG_OP_ADD || o == PG_OP_SUB || o == PG_OP_MUL || o == PG_OP_SHL ||
                            o == PG_OP_IDIV))
          normalize(odt);
      }
    }
  });
}

void FunctionWriter::push_zero(ValType t) {
  if (t == ValType::I64) {
    code_.u8(op::i64_const);
    code_.sleb(0);
  } else {
    const_i32(0);
  }
}

}  // namespace polygrad::wasm::detail
