// The statement writer, continued: memory access, ALU, conversions and vector shuffles.
#include "writer.hpp"

namespace polygrad::cstyle::detail {

void Writer::emit_load(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const Value& ptr = src(in, 0);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const int lanes = in.vcount;
  if (ptr.space == PG_ADDR_NONE) fail(PG_ERR_INVALID_ARGUMENT, i, "source is not a pointer");
  if (ptr.dtype != dt) fail(PG_ERR_INVALID_ARGUMENT, i, "dtype differs from the pointee's");
  if (ex_.is_half(dt) && emit_half_load(i, in)) return;
  const std::string type = type_of(dt, lanes);
  const std::string& p = ptr.expr;
  const std::string memcpy_name = dialect_.table().memcpy_name;
  v.expr = "v" + std::to_string(i);
  // Lane by lane; with `per_lane_gate`, lane k reads memory only when gate lane k is true.
  auto lanes_from_memory = [&](bool per_lane_gate) {
    std::vector<std::string> l(lanes);
    for (int k = 0; k < lanes; ++k) {
      std::string load = ex_.from_memory(dt, p + "[" + std::to_string(k) + "]");
      l[k] = per_lane_gate
                 ? "(" + lane(src(in, 2), k) + " ? " + load + " : " + lane(src(in, 1), k) + ")"
                 : load;
    }
    return literal(type, l);
  };
  const bool whole = lanes > 1 && !ex_.is_half(dt) && dialect_.table().aligned_vector_memory &&
                     ptr.space != PG_ADDR_REG;
  if (in.src_count == 1) {
    if (lanes == 1) {
      line("const " + type + " " + v.expr + " = " + ex_.from_memory(dt, "*" + p) + ";");
    } else if (whole) {
      line("const " + type + " " + v.expr + " = *(const " + type + "*)" + p + ";");
    } else if (ex_.is_half(dt)) {
      line("const " + type + " " + v.expr + " = " + lanes_from_memory(false) + ";");
    } else {
      line(type + " " + v.expr + ";");
      line(memcpy_name + "(&" + v.expr + ", " + p + ", sizeof(" + v.expr + "));");
    }
    return;
  }
  const Value& alt = src(in, 1);
  const Value& gate = src(in, 2);
  if (alt.dtype != dt || alt.lanes != lanes)
    fail(PG_ERR_INVALID_ARGUMENT, i, "the alternative value's type differs from the load's");
  if (gate.dtype != PG_DTYPE_BOOL || (gate.lanes != 1 && gate.lanes != lanes))
    fail(PG_ERR_INVALID_ARGUMENT, i, "the gate must be bool, scalar or one per lane");
  if (gate.lanes > 1) {
    line("const " + type + " " + v.expr + " = " + lanes_from_memory(true) + ";");
  } else if (lanes == 1 || ex_.is_half(dt)) {
    std::string load = lanes == 1 ? ex_.from_memory(dt, "*" + p) : lanes_from_memory(false);
    line("const " + type + " " + v.expr + " = " + gate.expr + " ? " + load + " : " + alt.expr +
         ";");
  } else if (whole) {
    line(type + " " + v.expr + " = " + alt.expr + ";");
    line("if (" + gate.expr + ") " + v.expr + " = *(const " + type + "*)" + p + ";");
  } else {
    line(type + " " + v.expr + " = " + alt.expr + ";");
    line("if (" + gate.expr + ") " + memcpy_name + "(&" + v.expr + ", " + p + ", sizeof(" + v.expr +
         "));");
  }
}

void Writer::declare_raw(uint32_t i, const std::vector<std::string>& bits) {
  Value& v = values_[i];
  v.raw.clear();
  const std::string type = ex_.mem_type(v.dtype);
  for (size_t k = 0; k < bits.size(); ++k) {
    const std::string name = "r" + std::to_string(i) + "_" + std::to_string(k);
    line("const " + type + " " + name + " = " + bits[k] + ";");
    v.raw.push_back(name);
  }
}

bool Writer::emit_half_load(uint32_t i, const pg_instruction& in) {
  // A 16-bit float is read as its bits, then widened: the bits stay at hand for a store or a
  // tensor-core operand that wants them as they are.
  Value& v = values_[i];
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const int lanes = in.vcount;
  const std::string& p = src(in, 0).expr;
  v.expr = "v" + std::to_string(i);
  const Value* alt = in.src_count == 3 ? &src(in, 1) : nullptr;
  const Value* gate = in.src_count == 3 ? &src(in, 2) : nullptr;
  if (alt != nullptr &&
      (alt->dtype != dt || alt->lanes != lanes || static_cast<int>(alt->raw.size()) != lanes))
    return false;  // (checked, or an alternative without known bits: the general path)
  if (gate != nullptr &&
      (gate->dtype != PG_DTYPE_BOOL || (gate->lanes != 1 && gate->lanes != lanes)))
    return false;
  std::vector<std::string> bits(lanes), l(lanes);
  for (int k = 0; k < lanes; ++k) {
    bits[k] = p + "[" + std::to_string(k) + "]";
    if (gate != nullptr)
      bits[k] = "(" + lane(*gate, k) + " ? " + bits[k] + " : " + alt->raw[k] + ")";
  }
  declare_raw(i, bits);
  for (int k = 0; k < lanes; ++k) l[k] = ex_.from_memory(dt, v.raw[k]);
  if (lanes == 1) {
    v.expr = l[0];  // widened where used: a value only stored or packed never is
    return true;
  }
  const std::string type = type_of(dt, lanes);
  line("const " + type + " " + v.expr + " = " + literal(type, l) + ";");
  return true;
}

void Writer::emit_store(uint32_t i, const pg_instruction& in) {
  const Value& ptr = src(in, 0);
  const Value& val = src(in, 1);
  const pg_dtype dt = ptr.dtype;
  if (ptr.space == PG_ADDR_NONE) fail(PG_ERR_INVALID_ARGUMENT, i, "target is not a pointer");
  if (val.dtype != dt) fail(PG_ERR_INVALID_ARGUMENT, i, "value dtype differs from the pointee's");
  const int lanes = val.lanes;
  const std::string& p = ptr.expr;
  const Value* gate = in.src_count == 3 ? &src(in, 2) : nullptr;
  if (gate != nullptr &&
      (gate->dtype != PG_DTYPE_BOOL || (gate->lanes != 1 && gate->lanes != lanes)))
    fail(PG_ERR_INVALID_ARGUMENT, i, "the gate must be bool, scalar or one per lane");
  const std::string guard = gate != nullptr && gate->lanes == 1 ? "if (" + gate->expr + ") " : "";
  const bool streamable =
      lanes > 1 && gate == nullptr && !ex_.is_half(dt) && (in.arg.i & PG_STORE_STREAM) != 0;
  const std::string stream = streamable ? dialect_.stream_store(p, val.expr, lanes) : "";
  if (ex_.is_half(dt) && static_cast<int>(val.raw.size()) == lanes &&
      (gate == nullptr || gate->lanes == 1)) {
    // The bits as they were loaded: no conversion there and back.
    for (int k = 0; k < lanes; ++k)
      line(guard + p + "[" + std::to_string(k) + "] = " + val.raw[k] + ";");
  } else if (lanes == 1) {
    line(guard + "*" + p + " = " + ex_.to_memory(dt, val.expr) + ";");
  } else if (!stream.empty()) {
    info_.streams = true;
    line(stream);
  } else if (!ex_.is_half(dt) && (gate == nullptr || gate->lanes == 1) &&
             dialect_.table().aligned_vector_memory && ptr.space != PG_ADDR_REG) {
    line(guard + "*(" + type_of(dt, lanes) + "*)" + p + " = " + val.expr + ";");
  } else if (!ex_.is_half(dt) && (gate == nullptr || gate->lanes == 1)) {
    line(guard + dialect_.table().memcpy_name + "(" + p + ", &" + val.expr + ", sizeof(" +
         val.expr + "));");
  } else {
    for (int k = 0; k < lanes; ++k) {
      std::string lane_guard = gate == nullptr    ? ""
                               : gate->lanes == 1 ? guard
                                                  : "if (" + lane(*gate, k) + ") ";
      line(lane_guard + p + "[" + std::to_string(k) + "] = " + ex_.to_memory(dt, lane(val, k)) +
           ";");
    }
  }
}

void Writer::emit_atomic_add(uint32_t i, const pg_instruction& in) {
  const Value& ptr = src(in, 0);
  const Value& val = src(in, 1);
  if (ptr.space == PG_ADDR_NONE) fail(PG_ERR_INVALID_ARGUMENT, i, "target is not a pointer");
  if (val.dtype != ptr.dtype || val.lanes != 1)
    fail(PG_ERR_INVALID_ARGUMENT, i, "the value must be one lane of the pointee's dtype");
  const std::string text = dialect_.atomic_add(ptr.dtype, ptr.expr, val.expr);
  if (text.empty())
    fail(PG_ERR_UNSUPPORTED, i,
         std::string("ATOMIC_ADD on ") + sdk::dtype_name(ptr.dtype) + " is not supported");
  line(text);
}

void Writer::emit_alu(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const auto op = static_cast<pg_op>(in.op);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const int lanes = in.vcount;
  // Input dtype: the first value source (the branches for WHERE).
  const uint32_t first_value = op == PG_OP_WHERE ? 1 : 0;
  const pg_dtype in_dt = src(in, first_value).dtype;
  bool same_lanes = true;
  for (uint32_t s = 0; s < in.src_count; ++s) {
    const Value& a = src(in, s);
    if (a.space != PG_ADDR_NONE) fail(PG_ERR_INVALID_ARGUMENT, i, "operand is a pointer");
    if (a.lanes != 1 && a.lanes != lanes)
      fail(PG_ERR_INVALID_ARGUMENT, i, "operand lanes differ from the result's");
    same_lanes = same_lanes && a.lanes == lanes;
    bool is_cond = op == PG_OP_WHERE && s == 0;
    bool is_shift_count = (op == PG_OP_SHL || op == PG_OP_SHR) && s == 1;
    if (is_cond && a.dtype != PG_DTYPE_BOOL)
      fail(PG_ERR_INVALID_ARGUMENT, i, "WHERE condition must be bool");
    if (!is_cond && !is_shift_count && a.dtype != in_dt)
      fail(PG_ERR_INVALID_ARGUMENT, i, "operand dtypes differ");
  }
  ex_.check_supported(op, dt, in_dt, where(i));
  const std::string type = type_of(dt, lanes);
  v.expr = "v" + std::to_string(i);
  if (op == PG_OP_WHERE && ex_.is_half(dt)) {
    // A select of two values whose bits are known selects the bits too.
    const Value &c = src(in, 0), &x = src(in, 1), &y = src(in, 2);
    auto raw_lane = [&](const Value& a, int k) { return a.raw[a.lanes > 1 ? k : 0]; };
    if (static_cast<int>(x.raw.size()) == x.lanes && static_cast<int>(y.raw.size()) == y.lanes) {
      std::vector<std::string> bits(lanes);
      for (int k = 0; k < lanes; ++k)
        bits[k] = "(" + lane(c, k) + " ? " + raw_lane(x, k) + " : " + raw_lane(y, k) + ")";
      declare_raw(i, bits);
      if (lanes == 1) {  // (as a loaded half: the float select is written where used)
        v.expr = "(" + c.expr + " ? " + x.expr + " : " + y.expr + ")";
        return;
      }
    }
  }
  if (lanes > 1 && same_lanes) {
    std::vector<std::string> names;
    for (uint32_t s = 0; s < in.src_count; ++s) names.push_back(src(in, s).expr);
    std::string e = ex_.vector_alu(op, dt, in_dt, names);
    if (e.empty()) e = vector_mask_op(op, dt, in_dt, names, lanes);
    if (!e.empty()) {
      line("const " + type + " " + v.expr + " = " + e + ";");
      return;
    }
  }
  std::vector<std::string> l(lanes);
  for (int k = 0; k < lanes; ++k) {
    std::vector<std::string> args;
    for (uint32_t s = 0; s < in.src_count; ++s) args.push_back(lane(src(in, s), k));
    l[k] = ex_.alu(op, dt, in_dt, args);
  }
  line("const " + type + " " + v.expr + " = " + literal(type, l) + ";");
}

std::string Writer::mask_type(pg_dtype dt, int lanes) {
  // Comparisons of ext_vector_type values give signed lanes of the operands' width, and a
  // vector ?: wants such a mask of the result's width. "" for bool lanes wider than a byte.
  uint32_t bytes = sdk::dtype_size(dt);
  if (dt == PG_DTYPE_BOOL) {
    const std::string lane = dialect_.table().bool_lane_type;
    if (lane != "unsigned char" && lane != "signed char" && lane != "char") return "";
    bytes = 1;
  }
  switch (bytes) {
    case 1:
      return type_of(PG_DTYPE_INT8, lanes);
    case 2:
      return type_of(PG_DTYPE_INT16, lanes);
    case 4:
      return type_of(PG_DTYPE_INT32, lanes);
    default:
      return type_of(PG_DTYPE_INT64, lanes);
  }
}

std::string Writer::vector_mask_op(pg_op op, pg_dtype dt, pg_dtype in,
                                   const std::vector<std::string>& a, int lanes) {
  const DialectTable& t = dialect_.table();
  if (!t.native_vector_ops || ex_.is_half(dt) || ex_.is_half(in)) return "";
  const std::string x = a[0], y = a.size() > 1 ? a[1] : "";
  auto compare = [&](const char* sym) {
    // The mask's -1 lanes become the 0/1 of a bool vector.
    return dialect_.vector_convert("-(" + x + sym + y + ")", type_of(PG_DTYPE_BOOL, lanes));
  };
  switch (op) {
    case PG_OP_CMPLT:
      return compare(" < ");
    case PG_OP_CMPNE:
      return compare(" != ");
    case PG_OP_CMPEQ:
      return compare(" == ");
    case PG_OP_MAX:
      // NaN propagates as in the scalar pg_max_f32: a NaN in x wins, one in y fails x > y.
      if (in == PG_DTYPE_FLOAT32 || in == PG_DTYPE_FLOAT64)
        return "(((" + x + " > " + y + ") | (" + x + " != " + x + ")) ? " + x + " : " + y + ")";
      return "((" + x + " > " + y + ") ? " + x + " : " + y + ")";
    case PG_OP_WHERE: {
      const std::string mask = mask_type(dt, lanes);
      if (mask.empty()) return "";
      return "((" + dialect_.vector_convert(x, mask) + " != 0) ? " + y + " : " + a[2] + ")";
    }
    default:
      return "";
  }
}

void Writer::emit_cast(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const Value& a = src(in, 0);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  if (a.space != PG_ADDR_NONE || a.dtype == PG_DTYPE_VOID || dt == PG_DTYPE_VOID)
    fail(PG_ERR_INVALID_ARGUMENT, i, "CAST needs a value of a non-void dtype");
  if (a.lanes != in.vcount) fail(PG_ERR_INVALID_ARGUMENT, i, "CAST cannot change lane count");
  const std::string type = type_of(dt, in.vcount);
  std::vector<std::string> l(in.vcount);
  for (int k = 0; k < in.vcount; ++k) l[k] = ex_.cast(a.dtype, dt, lane(a, k));
  v.expr = "v" + std::to_string(i);
  line("const " + type + " " + v.expr + " = " + literal(type, l) + ";");
}

void Writer::emit_bitcast(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const Value& a = src(in, 0);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  if (a.space != PG_ADDR_NONE || a.dtype == PG_DTYPE_VOID || dt == PG_DTYPE_VOID)
    fail(PG_ERR_INVALID_ARGUMENT, i, "BITCAST needs a value of a non-void dtype");
  const uint64_t from_bytes = uint64_t{sdk::dtype_size(a.dtype)} * a.lanes;
  const uint64_t to_bytes = uint64_t{sdk::dtype_size(dt)} * in.vcount;
  if (from_bytes != to_bytes)
    fail(PG_ERR_INVALID_ARGUMENT, i,
         "BITCAST from " + std::to_string(from_bytes) + " to " + std::to_string(to_bytes) +
             " bytes");
  // Through memory: the source's in-memory representation, copied into the target's.
  const std::string id = std::to_string(i);
  const std::string s = "m" + id + "_in", d = "m" + id + "_out";
  line(ex_.mem_type(a.dtype) + " " + s + "[" + std::to_string(a.lanes) + "];");
  for (int k = 0; k < a.lanes; ++k)
    line(s + "[" + std::to_string(k) + "] = " + ex_.to_memory(a.dtype, lane(a, k)) + ";");
  line(ex_.mem_type(dt) + " " + d + "[" + std::to_string(in.vcount) + "];");
  line(std::string(dialect_.table().memcpy_name) + "(" + d + ", " + s + ", sizeof(" + d + "));");
  const std::string type = type_of(dt, in.vcount);
  std::vector<std::string> l(in.vcount);
  for (int k = 0; k < in.vcount; ++k) {
    l[k] = ex_.from_memory(dt, d + "[" + std::to_string(k) + "]");
    if (dt == PG_DTYPE_BOOL) l[k] = "(" + l[k] + " != 0)";
  }
  v.expr = "v" + id;
  line("const " + type + " " + v.expr + " = " + literal(type, l) + ";");
}

void Writer::emit_vector(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const auto dt = static_cast<pg_dtype>(in.dtype);
  v.expr = "v" + std::to_string(i);
  if (in.op == PG_OP_GEP) {
    const Value& a = src(in, 0);
    if (a.space != PG_ADDR_NONE || a.dtype != dt)
      fail(PG_ERR_INVALID_ARGUMENT, i, "GEP source must be a value of the same dtype");
    if (in.arg.i < 0 || in.arg.i >= a.lanes)
      fail(PG_ERR_INVALID_ARGUMENT, i, "lane " + std::to_string(in.arg.i) + " out of range");
    v.lanes = 1;
    line("const " + type_of(dt, 1) + " " + v.expr + " = " + lane(a, static_cast<int>(in.arg.i)) +
         ";");
    if (static_cast<int>(a.raw.size()) == a.lanes) v.raw = {a.raw[in.arg.i]};
    return;
  }
  std::vector<std::string> l, bits;
  bool all_raw = ex_.is_half(dt);
  for (uint32_t s = 0; s < in.src_count; ++s) {
    const Value& a = src(in, s);
    if (a.lanes != 1 || a.dtype != dt || a.space != PG_ADDR_NONE)
      fail(PG_ERR_INVALID_ARGUMENT, i, "VECTORIZE sources must be scalars of the same dtype");
    l.push_back(a.expr);
    all_raw = all_raw && a.raw.size() == 1;
    if (all_raw) bits.push_back(a.raw[0]);
  }
  if (all_raw) v.raw = bits;
  const std::string type = type_of(dt, in.vcount);
  line("const " + type + " " + v.expr + " = " + literal(type, l) + ";");
}

}  // namespace polygrad::cstyle::detail
