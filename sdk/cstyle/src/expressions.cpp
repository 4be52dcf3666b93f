// Scalar expressions: types, constants, casts and ALU ops.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "writer.hpp"

namespace polygrad::cstyle::detail {

namespace {

using sdk::dtype_kind;

bool is_cmp(pg_op op) {
  return op == PG_OP_CMPLT || op == PG_OP_CMPNE || op == PG_OP_CMPEQ;
}

std::string p(const std::string& x) {
  return "(" + x + ")";
}

std::string hex_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return buf;
}

}  // namespace

std::string exact_half_bits(pg_dtype dt, double v) {
  if (!std::isfinite(v)) return "";
  const int mant = dt == PG_DTYPE_FLOAT16 ? 10 : 7, bias = dt == PG_DTYPE_FLOAT16 ? 15 : 127;
  const unsigned sign = std::signbit(v) ? 1u << (mant + (dt == PG_DTYPE_FLOAT16 ? 5 : 8)) : 0u;
  const double a = std::fabs(v);
  unsigned bits = 0;
  if (a != 0) {
    int e = 0;
    const double f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
    const int exp = e - 1 + bias;        // normal numbers only
    const double scaled = std::ldexp(f * 2 - 1, mant);
    if (exp <= 0 || exp >= 2 * bias + 1 || scaled != std::floor(scaled)) return "";
    bits = (static_cast<unsigned>(exp) << mant) | static_cast<unsigned>(scaled);
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%04xu", sign | bits);
  return std::string("((unsigned short)") + buf + ")";
}

bool Expressions::is_half(pg_dtype dt) const {
  return table_.half_as_float && (dt == PG_DTYPE_FLOAT16 || dt == PG_DTYPE_BFLOAT16);
}

std::string Expressions::reg_type(pg_dtype dt, int lanes_hint) const {
  if (is_half(dt)) return table_.type_names[PG_DTYPE_FLOAT32];
  if (dt == PG_DTYPE_BOOL && lanes_hint > 1) return table_.bool_lane_type;
  return mem_type(dt);
}

std::string Expressions::mem_type(pg_dtype dt) const {
  const char* name = dt < PG_DTYPE_COUNT ? table_.type_names[dt] : nullptr;
  if (name == nullptr)
    sdk::fail(PG_ERR_UNSUPPORTED,
              std::string("dtype ") + sdk::dtype_name(dt) + " has no type in this dialect");
  return name;
}

std::string Expressions::from_memory(pg_dtype dt, const std::string& x) const {
  if (!is_half(dt)) return x;
  return std::string(dt == PG_DTYPE_FLOAT16 ? "pg_f16_to_f32(" : "pg_bf16_to_f32(") + x + ")";
}

std::string Expressions::to_memory(pg_dtype dt, const std::string& x) const {
  if (!is_half(dt)) return x;
  return std::string(dt == PG_DTYPE_FLOAT16 ? "pg_f32_to_f16(" : "pg_f32_to_bf16(") + x + ")";
}

std::string Expressions::round_half(pg_dtype dt, const std::string& x) const {
  if (!is_half(dt)) return x;
  return std::string(dt == PG_DTYPE_FLOAT16 ? "pg_round_f16(" : "pg_round_bf16(") + x + ")";
}

std::string Expressions::cast_half(pg_dtype dt, const std::string& x) const {
  return std::string(dt == PG_DTYPE_FLOAT16 ? "pg_cast_f16(" : "pg_cast_bf16(") + x + ")";
}

std::string Expressions::constant(pg_dtype dt, pg_arg arg) const {
  const std::string type = reg_type(dt);
  switch (dtype_kind(dt)) {
    case 'b':
      return arg.i != 0 ? "1" : "0";
    case 'i': {
      uint32_t bits = sdk::dtype_size(dt) * 8;
      int64_t v = bits == 64 ? arg.i : (arg.i << (64 - bits)) >> (64 - bits);
      if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
      return "((" + type + ")" + std::to_string(v) + "LL)";
    }
    case 'u': {
      uint32_t bits = sdk::dtype_size(dt) * 8;
      uint64_t v = static_cast<uint64_t>(arg.i);
      if (bits < 64) v &= (uint64_t{1} << bits) - 1;
      return "((" + type + ")" + std::to_string(v) + "ULL)";
    }
    case 'f': {
      bool is_double = dt == PG_DTYPE_FLOAT64;
      double v = is_double ? arg.f : static_cast<double>(static_cast<float>(arg.f));
      if (is_half(dt)) v = arg.f;
      if (std::isnan(v)) return is_double ? table_.nan_f64 : table_.nan_f32;
      if (std::isinf(v)) {
        std::string inf = is_double ? table_.inf_f64 : table_.inf_f32;
        return v < 0 ? "(-" + inf + ")" : inf;
      }
      if (is_half(dt)) return cast_half(dt, hex_double(v));
      return p(hex_double(v) + (is_double ? "" : table_.float_suffix));
    }
    default:
      sdk::fail(PG_ERR_UNSUPPORTED, std::string("CONST of dtype ") + sdk::dtype_name(dt));
  }
}

std::string Expressions::cast(pg_dtype from, pg_dtype to, const std::string& x) const {
  if (from == to) return x;
  if (to == PG_DTYPE_BOOL) return "(" + p(x) + " != 0)";
  if (is_half(to)) {
    if (from == PG_DTYPE_BOOL) return "(" + reg_type(to) + ")" + p(x);
    // A float source rounds once from float; anything else goes through double (exact for
    // every int up to 2^53 and every float64).
    if (from == PG_DTYPE_FLOAT32 || is_half(from)) return round_half(to, x);
    return cast_half(to, "(double)" + p(x));
  }
  // A float to a narrower unsigned int goes through int64, as torch's and numpy's casts do:
  // -3.7 -> -3 -> 4294967293 as uint32 (C leaves a negative float to unsigned undefined;
  // clang gave 4294967295).
  const bool unsigned_to = to == PG_DTYPE_UINT8 || to == PG_DTYPE_UINT16 || to == PG_DTYPE_UINT32;
  if (unsigned_to && dtype_kind(from) == 'f') return "(" + reg_type(to) + ")(long long)" + p(x);
  return "(" + reg_type(to) + ")" + p(x);
}

void Expressions::check_supported(pg_op op, pg_dtype dt, pg_dtype in,
                                  const std::string& where) const {
  char k = dtype_kind(in);
  bool is_float = k == 'f', is_int = k == 'i' || k == 'u', is_bool = k == 'b';
  bool ok = false;
  switch (op) {
    case PG_OP_NEG:
      ok = is_float || is_int;
      break;
    case PG_OP_NOT:
      ok = is_bool || is_int;
      break;
    case PG_OP_RECIP:
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_TRUNC:
    case PG_OP_FDIV:
      ok = is_float;
      break;
    case PG_OP_IDIV:
    case PG_OP_MOD:
    case PG_OP_SHL:
    case PG_OP_SHR:
      ok = is_int;
      break;
    case PG_OP_AND:
    case PG_OP_OR:
    case PG_OP_XOR:
      ok = is_bool || is_int;
      break;
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_MAX:
    case PG_OP_MULACC:
    case PG_OP_CMPLT:
    case PG_OP_CMPNE:
    case PG_OP_CMPEQ:
    case PG_OP_WHERE:
      ok = is_float || is_int || is_bool;
      break;
    default:
      ok = false;
  }
  if (ok && is_cmp(op) && dt != PG_DTYPE_BOOL) ok = false;
  if (ok && !is_cmp(op) && dt != in) ok = false;
  if (!ok)
    sdk::fail(PG_ERR_UNSUPPORTED, where + ": " + sdk::op_name(op) + " is not defined for dtype " +
                                      sdk::dtype_name(in) + " -> " + sdk::dtype_name(dt));
}

std::string Expressions::alu(pg_op op, pg_dtype dt, pg_dtype in,
                             const std::vector<std::string>& a) const {
  const bool is_double = in == PG_DTYPE_FLOAT64;
  const bool is_float = dtype_kind(in) == 'f';
  // Narrow unsigned products promote to int and could overflow it; multiply as unsigned int.
  const bool narrow_u = dtype_kind(in) == 'u' && sdk::dtype_size(in) < 4;
  const std::string a0 = a.empty() ? "" : p(a[0]);
  const std::string a1 = a.size() > 1 ? p(a[1]) : "";
  const std::string a2 = a.size() > 2 ? p(a[2]) : "";
  const std::string m0 = narrow_u ? "(unsigned int)" + a0 : a0;
  std::string e;
  switch (op) {
    case PG_OP_NEG:
      e = "-" + a0;
      break;
    case PG_OP_NOT:
      e = in == PG_DTYPE_BOOL ? "!" + a0 : "~" + a0;
      break;
    case PG_OP_RECIP:
      e = std::string(is_double ? "1.0" : "1.0f") + " / " + a0;
      break;
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_TRUNC:
      e = dialect_.math(op, is_double, a[0]);
      break;
    case PG_OP_ADD:
      e = a0 + " + " + a1;
      break;
    case PG_OP_SUB:
      e = a0 + " - " + a1;
      break;
    case PG_OP_MUL:
      e = m0 + " * " + a1;
      break;
    case PG_OP_FDIV:
    case PG_OP_IDIV:
      e = a0 + " / " + a1;
      break;
    case PG_OP_MOD:
      e = a0 + " % " + a1;
      break;
    case PG_OP_MAX:
      if (is_float)
        e = std::string(is_double ? "pg_max_f64(" : "pg_max_f32(") + a[0] + ", " + a[1] + ")";
      else
        e = a0 + " > " + a1 + " ? " + a0 + " : " + a1;
      break;
    case PG_OP_CMPLT:
      e = a0 + " < " + a1;
      break;
    case PG_OP_CMPNE:
      e = a0 + " != " + a1;
      break;
    case PG_OP_CMPEQ:
      e = a0 + " == " + a1;
      break;
    case PG_OP_AND:
      e = a0 + " & " + a1;
      break;
    case PG_OP_OR:
      e = a0 + " | " + a1;
      break;
    case PG_OP_XOR:
      e = a0 + " ^ " + a1;
      break;
    case PG_OP_SHL:
      e = a0 + " << " + a1;
      break;
    case PG_OP_SHR:
      e = a0 + " >> " + a1;
      break;
    case PG_OP_WHERE:
      e = a0 + " ? " + a1 + " : " + a2;
      break;
    case PG_OP_MULACC:
      if (dt == PG_DTYPE_FLOAT32 && table_.fma_f32 != nullptr)
        e = std::string(table_.fma_f32) + "(" + a0 + ", " + a1 + ", " + a2 + ")";
      else if (dt == PG_DTYPE_FLOAT64 && table_.fma_f64 != nullptr)
        e = std::string(table_.fma_f64) + "(" + a0 + ", " + a1 + ", " + a2 + ")";
      else
        e = m0 + " * " + a1 + " + " + a2;
      break;
    default:  // check_supported refuses every other op
      sdk::fail(PG_ERR_INTERNAL, std::string(sdk::op_name(op)) + " is not an ALU op");
  }
  // bool arithmetic (a + b, a * b, ...) is normalised to 0/1.
  if (dt == PG_DTYPE_BOOL && !is_cmp(op) && op != PG_OP_WHERE && op != PG_OP_NOT)
    return "((" + e + ") != 0)";
  switch (op) {
    case PG_OP_RECIP:
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_FDIV:
    case PG_OP_MULACC:
      return round_half(dt, e);
    default:
      return p(e);
  }
}

std::string Expressions::vector_alu(pg_op op, pg_dtype dt, pg_dtype in,
                                    const std::vector<std::string>& a) const {
  if (!table_.native_vector_ops || is_half(dt) || is_half(in)) return "";
  const bool is_bool = dt == PG_DTYPE_BOOL;
  const char* sym = nullptr;
  switch (op) {
    case PG_OP_ADD:
      sym = is_bool ? nullptr : " + ";
      break;
    case PG_OP_SUB:
      sym = is_bool ? nullptr : " - ";
      break;
    case PG_OP_MUL:
      sym = is_bool ? nullptr : " * ";
      break;
    case PG_OP_FDIV:
    case PG_OP_IDIV:
      sym = " / ";
      break;
    case PG_OP_MOD:
      sym = " % ";
      break;
    case PG_OP_AND:
      sym = " & ";
      break;
    case PG_OP_OR:
      sym = " | ";
      break;
    case PG_OP_XOR:
      sym = " ^ ";
      break;
    case PG_OP_SHL:
      sym = " << ";
      break;
    case PG_OP_SHR:
      sym = " >> ";
      break;
    case PG_OP_NEG:
      return is_bool ? "" : "(-" + p(a[0]) + ")";
    case PG_OP_NOT:
      return is_bool ? "" : "(~" + p(a[0]) + ")";
    case PG_OP_MULACC:
      return is_bool ? "" : "(" + p(a[0]) + " * " + p(a[1]) + " + " + p(a[2]) + ")";
    default:
      return "";
  }
  if (sym == nullptr) return "";
  return "(" + p(a[0]) + sym + p(a[1]) + ")";
}

}  // namespace polygrad::cstyle::detail
