// FunctionWriter (function_writer.hpp): SIMD128. Values of 16 bytes in v128 locals, their
// lanes, splats and shuffles, the ops with a SIMD form, and the DEFINE_REG arrays (vector
// accumulators) held in locals.
#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "function_writer.hpp"

namespace polygrad::wasm::detail {

namespace simd = op::simd;
using sdk::fail;

namespace {

/// The lane type of a v128 holding n lanes of dt (a bool mask's lanes are integers).
enum class Kind { I8, I16, I32, I64, F32, F64 };

Kind kind_of(uint32_t dt, uint32_t n) {
  const uint32_t width = 16 / n;
  if (dt == PG_DTYPE_FLOAT32) return Kind::F32;
  if (dt == PG_DTYPE_FLOAT64) return Kind::F64;
  return width == 1 ? Kind::I8 : width == 2 ? Kind::I16 : width == 4 ? Kind::I32 : Kind::I64;
}

bool is_float(Kind k) {
  return k == Kind::F32 || k == Kind::F64;
}

/// The opcode for kind k from a table in the order I8, I16, I32, I64, F32, F64 (0: none).
uint32_t by_kind(Kind k, std::initializer_list<uint32_t> table) {
  return table.begin()[static_cast<int>(k)];
}

}  // namespace

bool simd_shape(uint32_t dt, uint32_t n) {
  if (n < 2 || n > 16) return false;
  if (dt == PG_DTYPE_BOOL) return n == 2 || n == 4 || n == 8 || n == 16;
  if (dt == PG_DTYPE_FLOAT16 || dt == PG_DTYPE_BFLOAT16 || dt >= PG_DTYPE_COUNT) return false;
  return sdk::dtype_size(dt) * n == 16;
}

void FunctionWriter::push_ref(const LaneRef& r) {
  get(r.local);
  if (r.count) extract(r.dtype, r.count, r.lane);
}

void FunctionWriter::extract(uint32_t dt, uint32_t n, uint32_t lane) {
  const Kind k = kind_of(dt, n);
  const bool s = sdk::dtype_kind(dt) == 'i';
  code_.simd(by_kind(
      k, {s ? simd::i8x16_extract_lane_s : simd::i8x16_extract_lane_u,
          s ? simd::i16x8_extract_lane_s : simd::i16x8_extract_lane_u, simd::i32x4_extract_lane,
          simd::i64x2_extract_lane, simd::f32x4_extract_lane, simd::f64x2_extract_lane}));
  code_.u8(static_cast<uint8_t>(lane));
  if (dt == PG_DTYPE_BOOL) {  // a mask lane (all ones or zeros) to 0 or 1
    if (k == Kind::I64) code_.u8(op::i32_wrap_i64);
    const_i32(1);
    code_.u8(op::i32_and);
  }
}

void FunctionWriter::replace(uint32_t dt, uint32_t n, uint32_t lane) {
  code_.simd(by_kind(kind_of(dt, n), {simd::i8x16_replace_lane, simd::i16x8_replace_lane,
                                      simd::i32x4_replace_lane, simd::i64x2_replace_lane,
                                      simd::f32x4_replace_lane, simd::f64x2_replace_lane}));
  code_.u8(static_cast<uint8_t>(lane));
}

void FunctionWriter::splat(uint32_t dt, uint32_t n) {
  code_.simd(by_kind(kind_of(dt, n), {simd::i8x16_splat, simd::i16x8_splat, simd::i32x4_splat,
                                      simd::i64x2_splat, simd::f32x4_splat, simd::f64x2_splat}));
}

void FunctionWriter::to_lane(uint32_t dt, uint32_t n) {
  if (dt != PG_DTYPE_BOOL) return;
  if (kind_of(dt, n) == Kind::I64) {  // 0/1 -> 0/-1
    code_.u8(op::i64_extend_i32_u);
    code_.u8(op::i64_const);
    code_.sleb(-1);
    code_.u8(op::i64_mul);
  } else {
    const_i32(-1);
    code_.u8(op::i32_mul);
  }
}

void FunctionWriter::v128_const(uint32_t dt, uint32_t n, pg_arg a) {
  uint8_t bytes[16] = {};
  const uint32_t w = 16 / n;
  for (uint32_t l = 0; l < n; ++l) {
    uint8_t* at = bytes + l * w;
    if (dt == PG_DTYPE_FLOAT32) {
      float f = static_cast<float>(a.f);
      std::memcpy(at, &f, 4);
    } else if (dt == PG_DTYPE_FLOAT64) {
      std::memcpy(at, &a.f, 8);
    } else {
      const int64_t v = dt == PG_DTYPE_BOOL ? (a.i != 0 ? -1 : 0) : a.i;
      std::memcpy(at, &v, w);  // little-endian: the low w bytes
    }
  }
  code_.simd(simd::v128_const);
  code_.raw(bytes, 16);
}

void FunctionWriter::push_vector(uint32_t i, uint32_t dt, uint32_t n) {
  if (vec_[i] != kNone) return get(vec_[i]);
  if (lanes_[i].size() == 1 || !splat_[i].empty()) {
    if (lanes_[i].size() == 1)
      push_lane(i, 0);
    else
      push_ref(splat_[i][0]);
    to_lane(dt, n);
    return splat(dt, n);
  }
  for (uint32_t l = 0; l < n; ++l) {
    push_lane(i, l);
    to_lane(dt, n);
    if (l == 0)
      splat(dt, n);
    else
      replace(dt, n, l);
  }
}

void FunctionWriter::vectorize(uint32_t i, const pg_instruction& x, uint32_t n) {
  if (x.src_count != n) unsupported(i, "a VECTORIZE has one source per lane");
  std::vector<LaneRef> refs;
  for (uint32_t k = 0; k < n; ++k) refs.push_back(lane(src(x, k), 0));
  if (std::all_of(refs.begin(), refs.end(), [&](const LaneRef& r) { return r == refs[0]; })) {
    uint32_t v = new_local(ValType::V128);  // a broadcast
    push_ref(refs[0]);
    to_lane(x.dtype, n);
    splat(x.dtype, n);
    set(v);
    set_vector(i, v, x.dtype, n);
    splat_[i] = {refs[0]};
    return;
  }
  // Lanes of at most two vectors of n lanes each: a shuffle (or the vector itself).
  std::vector<uint32_t> from;
  bool lanes_of_vectors = true;
  for (const LaneRef& r : refs) {
    if (r.count != n) {
      lanes_of_vectors = false;
      break;
    }
    if (std::find(from.begin(), from.end(), r.local) == from.end()) from.push_back(r.local);
  }
  if (lanes_of_vectors && from.size() <= 2) {
    bool same = from.size() == 1;
    for (uint32_t l = 0; l < n && same; ++l) same = refs[l].lane == l;
    if (same) return set_vector(i, from[0], x.dtype, n);
    uint32_t v = new_local(ValType::V128);
    get(from[0]);
    get(from.back());
    code_.simd(simd::i8x16_shuffle);
    const uint32_t w = 16 / n;
    for (uint32_t l = 0; l < n; ++l) {
      const uint32_t base = (refs[l].local == from[0] ? 0 : 16) + refs[l].lane * w;
      for (uint32_t b = 0; b < w; ++b) code_.u8(static_cast<uint8_t>(base + b));
    }
    set(v);
    return set_vector(i, v, x.dtype, n);
  }
  by_lanes(i, x.dtype, n, [&](uint32_t l) { push_ref(refs[l]); });
}

bool FunctionWriter::push_shift_count(uint32_t s) {
  const pg_instruction& c = in(s);
  if (c.op == PG_OP_CONST) {
    const_i32(static_cast<int32_t>(c.arg.i));
    return true;
  }
  if (splat_[s].empty() && lanes_[s].size() != 1) return false;
  push_ref(splat_[s].empty() ? lanes_[s][0] : splat_[s][0]);
  if (repr_of(c.dtype).type == ValType::I64) code_.u8(op::i32_wrap_i64);
  return true;
}

bool FunctionWriter::simd_alu(uint32_t i, const pg_instruction& x, uint32_t n) {
  const uint32_t o = x.op;
  const bool compare = o == PG_OP_CMPLT || o == PG_OP_CMPNE || o == PG_OP_CMPEQ;
  const uint32_t dt = compare ? in(src(x, 0)).dtype : x.dtype;  // the operands' dtype
  if (!simd_shape(dt, n)) return false;
  const Kind k = kind_of(dt, n);
  const bool bool_mask = dt == PG_DTYPE_BOOL;
  const bool is_signed = sdk::dtype_kind(dt) == 'i';
  auto a = [&](uint32_t s) { push_vector(src(x, s), dt, n); };
  auto done = [&]() {
    uint32_t v = new_local(ValType::V128);
    set(v);
    set_vector(i, v, x.dtype, n);
    return true;
  };
  // Binary ops with one instruction for each kind (0: none).
  auto binary = [&](uint32_t code) {
    if (code == 0) return false;
    a(0);
    a(1);
    code_.simd(code);
    return done();
  };
  if (o == PG_OP_WHERE) {
    push_vector(src(x, 1), dt, n);
    push_vector(src(x, 2), dt, n);
    push_vector(src(x, 0), PG_DTYPE_BOOL, n);
    code_.simd(simd::v128_bitselect);
    return done();
  }
  if (bool_mask) {  // masks: logic is bitwise
    switch (o) {
      case PG_OP_AND:
        return binary(simd::v128_and);
      case PG_OP_OR:
      case PG_OP_MAX:
        return binary(simd::v128_or);
      case PG_OP_XOR:
      case PG_OP_CMPNE:
        return binary(simd::v128_xor);
      case PG_OP_CMPEQ:
        a(0);
        a(1);
        code_.simd(simd::v128_xor);
        code_.simd(simd::v128_not);
        return done();
      case PG_OP_NOT:
        a(0);
        code_.simd(simd::v128_not);
        return done();
      case PG_OP_CMPLT:  // a < b: !a & b
        a(1);
        a(0);
        code_.simd(simd::v128_andnot);
        return done();
      default:
        return false;
    }
  }
  auto add = by_kind(k, {simd::i8x16_add, simd::i16x8_add, simd::i32x4_add, simd::i64x2_add,
                         simd::f32x4_add, simd::f64x2_add});
  auto mul = by_kind(
      k, {0, simd::i16x8_mul, simd::i32x4_mul, simd::i64x2_mul, simd::f32x4_mul, simd::f64x2_mul});
  switch (o) {
    case PG_OP_ADD:
      return binary(add);
    case PG_OP_SUB:
      return binary(by_kind(k, {simd::i8x16_sub, simd::i16x8_sub, simd::i32x4_sub, simd::i64x2_sub,
                                simd::f32x4_sub, simd::f64x2_sub}));
    case PG_OP_MUL:
      return binary(mul);
    case PG_OP_FDIV:
      return binary(by_kind(k, {0, 0, 0, 0, simd::f32x4_div, simd::f64x2_div}));
    case PG_OP_AND:
      return binary(simd::v128_and);
    case PG_OP_OR:
      return binary(simd::v128_or);
    case PG_OP_XOR:
      return binary(simd::v128_xor);
    case PG_OP_CMPEQ:
      return binary(by_kind(k, {simd::i8x16_eq, simd::i16x8_eq, simd::i32x4_eq, simd::i64x2_eq,
                                simd::f32x4_eq, simd::f64x2_eq}));
    case PG_OP_CMPNE:
      return binary(by_kind(k, {simd::i8x16_ne, simd::i16x8_ne, simd::i32x4_ne, simd::i64x2_ne,
                                simd::f32x4_ne, simd::f64x2_ne}));
    case PG_OP_CMPLT:
      return binary(by_kind(k, {is_signed ? simd::i8x16_lt_s : simd::i8x16_lt_u,
                                is_signed ? simd::i16x8_lt_s : simd::i16x8_lt_u,
                                is_signed ? simd::i32x4_lt_s : simd::i32x4_lt_u,
                                is_signed ? simd::i64x2_lt_s : 0, simd::f32x4_lt, simd::f64x2_lt}));
    case PG_OP_MAX:
      if (k == Kind::I64) {  // signed only: a > b ? a : b
        if (!is_signed) return false;
        a(0);
        a(1);
        a(0);
        a(1);
        code_.simd(simd::i64x2_gt_s);
        code_.simd(simd::v128_bitselect);
        return done();
      }
      if (k == Kind::F32 || k == Kind::F64) {
        // pmax(a, b) | pmax(b, a): pmax is one maxps/maxpd (b if a < b, else a), so each
        // gives the larger, and where either is NaN one of them is that NaN, which the OR
        // keeps NaN. NaN if either is NaN, as PG_OP_MAX; max(+0, -0) is -0 (PG_OP_MAX leaves
        // the zero's sign open; cpu_clang's gives its second operand). f32x4.max computes
        // the same in a sequence of eight, whose latency a reduction's chain pays each step.
        const uint32_t pmax = k == Kind::F32 ? simd::f32x4_pmax : simd::f64x2_pmax;
        a(0);
        a(1);
        code_.simd(pmax);
        a(1);
        a(0);
        code_.simd(pmax);
        code_.simd(simd::v128_or);
        return done();
      }
      return binary(by_kind(k, {is_signed ? simd::i8x16_max_s : simd::i8x16_max_u,
                                is_signed ? simd::i16x8_max_s : simd::i16x8_max_u,
                                is_signed ? simd::i32x4_max_s : simd::i32x4_max_u, 0, 0, 0}));
    case PG_OP_NEG:
      a(0);
      code_.simd(by_kind(k, {simd::i8x16_neg, simd::i16x8_neg, simd::i32x4_neg, simd::i64x2_neg,
                             simd::f32x4_neg, simd::f64x2_neg}));
      return done();
    case PG_OP_NOT:
      a(0);
      code_.simd(simd::v128_not);
      return done();
    case PG_OP_SQRT:
    case PG_OP_TRUNC:
      if (!is_float(k)) return false;
      a(0);
      if (o == PG_OP_SQRT)
        code_.simd(k == Kind::F32 ? simd::f32x4_sqrt : simd::f64x2_sqrt);
      else
        code_.simd(k == Kind::F32 ? simd::f32x4_trunc : simd::f64x2_trunc);
      return done();
    case PG_OP_RECIP: {
      if (!is_float(k)) return false;
      pg_arg one;
      one.f = 1.0;
      v128_const(dt, n, one);
      a(0);
      code_.simd(k == Kind::F32 ? simd::f32x4_div : simd::f64x2_div);
      return done();
    }
    case PG_OP_MULACC:
      if (mul == 0) return false;
      a(0);
      a(1);
      code_.simd(mul);
      a(2);
      code_.simd(add);
      return done();
    case PG_OP_SHL:
    case PG_OP_SHR: {
      if (is_float(k)) return false;
      const uint32_t code = o == PG_OP_SHL ? by_kind(k, {simd::i8x16_shl, simd::i16x8_shl,
                                                         simd::i32x4_shl, simd::i64x2_shl, 0, 0})
                            : is_signed    ? by_kind(k, {simd::i8x16_shr_s, simd::i16x8_shr_s,
                                                         simd::i32x4_shr_s, simd::i64x2_shr_s, 0, 0})
                                           : by_kind(k, {simd::i8x16_shr_u, simd::i16x8_shr_u,
                                                         simd::i32x4_shr_u, simd::i64x2_shr_u, 0, 0});
      // One count for every lane; the count is emitted after the vector, so check first.
      const uint32_t s = src(x, 1);
      if (in(s).op != PG_OP_CONST && splat_[s].empty() && lanes_[s].size() != 1) return false;
      a(0);
      push_shift_count(s);
      code_.simd(code);
      return done();
    }
    default:
      return false;  // IDIV, MOD: lane by lane
  }
}

bool FunctionWriter::simd_convert(uint32_t i, const pg_instruction& x, uint32_t n) {
  const uint32_t s = src(x, 0);
  const uint32_t from = in(s).dtype, to = x.dtype, sn = lane_count(s);
  if (!simd_shape(to, n) || !simd_shape(from, sn)) return false;
  auto alias = [&]() {
    uint32_t v = vec_[s];
    if (v == kNone) {
      v = new_local(ValType::V128);
      push_vector(s, from, sn);
      set(v);
    }
    set_vector(i, v, to, n);
    return true;
  };
  auto done = [&]() {
    uint32_t v = new_local(ValType::V128);
    set(v);
    set_vector(i, v, to, n);
    return true;
  };
  if (x.op == PG_OP_BITCAST) {
    if (from == PG_DTYPE_BOOL || to == PG_DTYPE_BOOL) return false;
    return alias();  // the same 16 bytes
  }
  if (sn != n) return false;
  const char fk = sdk::dtype_kind(from), tk = sdk::dtype_kind(to);
  const bool from_int = fk == 'i' || fk == 'u', to_int = tk == 'i' || tk == 'u';
  if (from == to || (from_int && to_int)) return alias();  // same width: the same bits
  pg_arg zero;
  zero.i = 0;
  if (to == PG_DTYPE_BOOL) {  // x != 0
    const Kind k = kind_of(from, n);
    push_vector(s, from, n);
    v128_const(from, n, zero);
    code_.simd(by_kind(k, {simd::i8x16_ne, simd::i16x8_ne, simd::i32x4_ne, simd::i64x2_ne,
                           simd::f32x4_ne, simd::f64x2_ne}));
    return done();
  }
  if (from == PG_DTYPE_BOOL) {  // mask & (1 of dtype to)
    pg_arg one;
    if (tk == 'f')
      one.f = 1.0;
    else
      one.i = 1;
    push_vector(s, from, n);
    v128_const(to, n, one);
    code_.simd(simd::v128_and);
    return done();
  }
  if (n != 4) return false;  // f32x4 <-> i32x4 / u32x4; other pairs change the lane width
  // A float to uint32 wraps through int64 (-3.7 -> 2^32 - 3, as torch and numpy do), which
  // i32x4.trunc_sat_f32x4_u does not (it gives 0): done lane by lane.
  if (fk == 'f' && tk == 'u') return false;
  if (fk == 'f' && to_int) {
    push_vector(s, from, n);
    code_.simd(tk == 'i' ? simd::i32x4_trunc_sat_f32x4_s : simd::i32x4_trunc_sat_f32x4_u);
    return done();
  }
  if (from_int && tk == 'f') {
    push_vector(s, from, n);
    code_.simd(fk == 'i' ? simd::f32x4_convert_i32x4_s : simd::f32x4_convert_i32x4_u);
    return done();
  }
  return false;
}

// --- register arrays held in locals --------------------------------------------------------

void FunctionWriter::plan_registers() {
  const uint32_t count = p_.instruction_count;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> users(count);  // (user, operand)
  for (uint32_t j = 0; j < count; ++j)
    for (uint32_t k = 0; k < in(j).src_count; ++k) users[src(in(j), k)].push_back({j, k});
  for (uint32_t d = 0; d < count; ++d) {
    const pg_instruction& reg = in(d);
    if (reg.op != PG_OP_DEFINE_REG || reg.arg.i <= 0 || users[d].empty()) continue;
    const int64_t size = reg.arg.i;
    // Every access: an INDEX at a constant offset, then a LOAD or STORE through it.
    bool ok = true;
    uint32_t lanes = 0;                                       // the widest access
    std::vector<std::tuple<uint32_t, int64_t, uint32_t>> at;  // (INDEX, offset, lanes)
    for (auto [j, k] : users[d]) {
      const pg_instruction& ix = in(j);
      ok = ok && ix.op == PG_OP_INDEX && k == 0 && in(src(ix, 1)).op == PG_OP_CONST;
      if (!ok) break;
      const int64_t off = in(src(ix, 1)).arg.i;
      for (auto [u, kk] : users[j]) {
        const pg_instruction& use = in(u);
        ok = ok && kk == 0 && (use.op == PG_OP_LOAD || use.op == PG_OP_STORE);
        if (!ok) break;
        const pg_instruction& value = use.op == PG_OP_LOAD ? use : in(src(use, 1));
        const uint32_t n = value.vcount ? value.vcount : 1;
        ok = off >= 0 && off % n == 0 && off + n <= size;
        lanes = std::max(lanes, n);
        at.push_back({j, off, n});
      }
    }
    if (!ok || lanes == 0) continue;
    // Slots of `lanes` elements; an access reads or writes one whole slot, or one lane of a
    // v128 slot, or any lanes of a slot of scalar locals.
    const bool vector = simd_shape(reg.dtype, lanes);
    for (auto [j, off, n] : at)
      ok = ok && (off % lanes) + n <= lanes && (!vector || n == 1 || n == lanes);
    if (!ok) continue;
    RegArray a;
    a.lanes = lanes;
    const ValType t = vector ? ValType::V128 : repr_of(reg.dtype).type;
    for (int64_t s = 0; s < (size + lanes - 1) / lanes; ++s) {
      a.slots.push_back(new_local(t));
      if (!vector)
        for (uint32_t l = 1; l < lanes; ++l) new_local(t);  // the slot's other lanes follow
    }
    regs_.push_back(std::move(a));
    const uint32_t id = static_cast<uint32_t>(regs_.size());
    reg_slot_[d] = {id, 0};
    for (auto [j, off, n] : at) reg_slot_[j] = {id, static_cast<uint32_t>(off)};
  }
}

void FunctionWriter::load_slot(uint32_t i, const pg_instruction& x, uint32_t n) {
  auto [id, off] = reg_slot_[src(x, 0)];
  const RegArray& reg = regs_[id - 1];
  const uint32_t first = reg.slots[off / reg.lanes], sub = off % reg.lanes;
  const bool whole_vector = simd_shape(x.dtype, reg.lanes);  // the slot is a v128
  const bool gated = x.src_count == 3;
  const bool vector = simd_shape(x.dtype, n);
  std::vector<uint32_t> out;
  if (vector)
    out.push_back(new_local(ValType::V128));
  else
    for (uint32_t l = 0; l < n; ++l) out.push_back(new_local(repr_of(x.dtype).type));
  if (gated) {
    get(scalar_local(src(x, 2)));
    code_.u8(op::if_);
    code_.u8(0x40);
  }
  for (uint32_t l = 0; l < out.size(); ++l) {
    if (whole_vector && !vector) {  // one lane of the v128
      get(first);
      extract(x.dtype, reg.lanes, sub + l);
    } else {
      get(first + sub + l);
    }
    set(out[l]);
  }
  if (gated) {
    code_.u8(op::else_);
    if (vector) {
      push_vector(src(x, 1), x.dtype, n);
      set(out[0]);
    } else {
      for (uint32_t l = 0; l < n; ++l) {
        push_lane(src(x, 1), l);
        set(out[l]);
      }
    }
    code_.u8(op::end);
  }
  if (vector)
    set_vector(i, out[0], x.dtype, n);
  else
    set_scalars(i, out);
}

void FunctionWriter::store_slot(const pg_instruction& x) {
  auto [id, off] = reg_slot_[src(x, 0)];
  const RegArray& reg = regs_[id - 1];
  const uint32_t first = reg.slots[off / reg.lanes], sub = off % reg.lanes;
  const uint32_t value = src(x, 1), dt = in(src(x, 0)).dtype;
  const uint32_t n = lane_count(value);
  const bool gated = x.src_count == 3;
  if (gated) {
    get(scalar_local(src(x, 2)));
    code_.u8(op::if_);
    code_.u8(0x40);
  }
  if (simd_shape(dt, reg.lanes) && n == reg.lanes) {
    push_vector(value, dt, n);
    set(first);
  } else if (simd_shape(dt, reg.lanes)) {  // one lane of the v128
    get(first);
    push_lane(value, 0);
    to_lane(dt, reg.lanes);
    replace(dt, reg.lanes, sub);
    set(first);
  } else {
    for (uint32_t l = 0; l < n; ++l) {
      push_lane(value, l);
      set(first + sub + l);
    }
  }
  if (gated) code_.u8(op::end);
}

}  // namespace polygrad::wasm::detail
