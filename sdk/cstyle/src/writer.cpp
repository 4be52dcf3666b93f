// The statement writer: walks the SSA program once and writes one statement per instruction.
#include "writer.hpp"

#include <algorithm>

namespace polygrad::cstyle::detail {

Writer::Writer(const pg_kernel_program& program, const Dialect& dialect)
    : program_(program), dialect_(dialect), ex_(dialect) {
  info_.name = program.name;
  info_.buffers.assign(program.buffer_count, PG_DTYPE_VOID);
  info_.scalars.assign(program.scalar_count, PG_DTYPE_VOID);
  for (int d = 0; d < 3; ++d) info_.local_size[d] = program.local_size[d];
  for (uint32_t i = 0; i < program.instruction_count; ++i) {
    const pg_instruction& in = program.instructions[i];
    if (in.op == PG_OP_PARAM_BUFFER) info_.buffers[in.arg.i] = static_cast<pg_dtype>(in.dtype);
    if (in.op == PG_OP_PARAM_SCALAR) info_.scalars[in.arg.i] = static_cast<pg_dtype>(in.dtype);
    if (in.op == PG_OP_DEFINE_LOCAL || in.op == PG_OP_BARRIER) info_.uses_local = true;
    if (in.op == PG_OP_SPECIAL && in.arg.i >= 0 && in.arg.i < 3) info_.uses_dim[in.arg.i] = true;
  }
}

std::string Writer::where(uint32_t i) const {
  const pg_instruction& in = program_.instructions[i];
  return "kernel '" + info_.name + "' instruction " + std::to_string(i) + " (" +
         sdk::op_name(in.op) + ", " + sdk::dtype_name(in.dtype) +
         (in.vcount > 1 ? "x" + std::to_string(in.vcount) : "") + ")";
}

void Writer::fail(pg_status status, uint32_t i, const std::string& what) const {
  sdk::fail(status, where(i) + ": " + what);
}

const Value& Writer::src(const pg_instruction& in, uint32_t s) const {
  return values_[sdk::sources(program_, in)[s]];
}

std::string Writer::lane(const Value& v, int l) const {
  return v.lanes > 1 ? dialect_.vector_lane(v.expr, l) : v.expr;
}

bool Writer::loop_has_barrier(uint32_t range) const {
  for (uint32_t j = range + 1; j < program_.instruction_count; ++j) {
    const pg_instruction& in = program_.instructions[j];
    if (in.op == PG_OP_BARRIER) return true;
    if (in.op == PG_OP_END_RANGE && in.src_count > 0 && sdk::sources(program_, in)[0] == range)
      return false;
  }
  return false;
}

bool Writer::is_closed(int block) const {
  return block != 0 && std::none_of(open_.begin(), open_.end(),
                                    [&](const auto& open) { return open.first == block; });
}

std::string Writer::type_of(pg_dtype dt, int lanes) {
  std::string lane_type = ex_.reg_type(dt, lanes);
  if (lanes == 1) return lane_type;
  auto key = std::make_pair(lane_type, lanes);
  if (std::find(vector_types_.begin(), vector_types_.end(), key) == vector_types_.end())
    vector_types_.push_back(key);
  return dialect_.vector_type(lane_type, lanes);
}

std::string Writer::literal(const std::string& type, const std::vector<std::string>& lanes) const {
  return lanes.size() == 1 ? lanes[0] : dialect_.vector_literal(type, lanes);
}

void Writer::line(const std::string& text) {
  body_.append(static_cast<size_t>(indent_) * 2, ' ');
  body_ += text;
  body_ += '\n';
}

std::string Writer::run() {
  values_.resize(program_.instruction_count);
  for (uint32_t i = 0; i < program_.instruction_count; ++i) {
    const pg_instruction& in = program_.instructions[i];
    for (uint32_t s = 0; s < in.src_count; ++s) {
      uint32_t j = sdk::sources(program_, in)[s];
      if (is_closed(values_[j].block))
        fail(PG_ERR_INVALID_ARGUMENT, i,
             "uses instruction " + std::to_string(j) + " after the block defining it closed");
      if (program_.instructions[j].op == PG_OP_END_RANGE ||
          program_.instructions[j].op == PG_OP_END_IF ||
          program_.instructions[j].op == PG_OP_STORE ||
          program_.instructions[j].op == PG_OP_ATOMIC_ADD)
        fail(PG_ERR_INVALID_ARGUMENT, i,
             "uses instruction " + std::to_string(j) + ", which has no value");
    }
    emit(i);
  }
  if (!open_.empty()) fail(PG_ERR_INVALID_ARGUMENT, open_.back().second, "block is never closed");

  std::string out = "/* polygrad kernel " + info_.name + " */\n";
  for (const auto& [lane_type, lanes] : vector_types_)
    out += dialect_.vector_typedef(lane_type, lanes);
  const std::string prelude = dialect_.prelude(info_);
  out += detail::base_prelude(dialect_, {prelude, params_, body_});
  out += prelude;
  out += dialect_.kernel_open(info_);
  out += params_;
  out += dialect_.body_open(info_);
  out += body_;
  out += dialect_.body_close(info_);
  out += dialect_.kernel_close(info_);
  return out;
}

void Writer::emit(uint32_t i) {
  const pg_instruction& in = program_.instructions[i];
  const auto op = static_cast<pg_op>(in.op);
  const auto dt = static_cast<pg_dtype>(in.dtype);
  Value& v = values_[i];
  v.dtype = dt;
  v.lanes = in.vcount;
  v.space = static_cast<pg_addrspace>(in.addrspace);
  v.block = open_.empty() ? 0 : open_.back().first;
  const std::string id = std::to_string(i);
  if (in.vcount > 1 && dt == PG_DTYPE_VOID && op != PG_OP_STORE)
    fail(PG_ERR_INVALID_ARGUMENT, i, "a void value cannot have lanes");
  switch (op) {
    case PG_OP_PARAM_BUFFER:
    case PG_OP_PARAM_SCALAR:
      emit_param(i, in);
      return;
    case PG_OP_DEFINE_LOCAL:
    case PG_OP_DEFINE_REG: {
      if (in.arg.i <= 0) fail(PG_ERR_INVALID_ARGUMENT, i, "array size must be positive");
      v.expr = "p" + id;
      v.lanes = 1;
      if (op == PG_OP_DEFINE_LOCAL)
        line(dialect_.define_local(ex_.mem_type(dt), v.expr, in.arg.i));
      else
        line(ex_.mem_type(dt) + " " + v.expr + "[" + std::to_string(in.arg.i) + "];");
      return;
    }
    case PG_OP_SPECIAL:
      v.expr = "v" + id;
      line("const int " + v.expr + " = " +
           dialect_.special(static_cast<pg_special_kind>(in.arg2), static_cast<int>(in.arg.i)) +
           ";");
      return;
    case PG_OP_CONST: {
      std::string c = ex_.constant(dt, in.arg);
      if (ex_.is_half(dt)) {
        const std::string bits = exact_half_bits(dt, in.arg.f);
        if (!bits.empty()) v.raw.assign(in.vcount, bits);
      }
      if (in.vcount == 1) {
        v.expr = c;
        v.block = 0;  // a literal belongs to no block
        return;
      }
      v.expr = "v" + id;
      std::string type = type_of(dt, in.vcount);
      line("const " + type + " " + v.expr + " = " +
           literal(type, std::vector<std::string>(in.vcount, c)) + ";");
      return;
    }
    case PG_OP_RANGE: {
      const Value& end = src(in, 0);
      if (end.lanes != 1 || !sdk::dtype_is_int(end.dtype))
        fail(PG_ERR_INVALID_ARGUMENT, i, "loop bound must be a scalar integer");
      v.expr = "r" + id;
      v.dtype = end.dtype;
      const char* pragma = dialect_.table().loop_pragma;
      if (dialect_.table().barrier_loop_pragma != nullptr && loop_has_barrier(i))
        pragma = dialect_.table().barrier_loop_pragma;
      if (pragma != nullptr) line(pragma);
      line("for (" + type_of(end.dtype, 1) + " " + v.expr + " = 0; " + v.expr + " < " + end.expr +
           "; ++" + v.expr + ") {");
      open_.emplace_back(next_block_++, i);
      ++indent_;
      return;
    }
    case PG_OP_IF:
      if (src(in, 0).lanes != 1) fail(PG_ERR_INVALID_ARGUMENT, i, "IF needs a scalar condition");
      line("if (" + src(in, 0).expr + ") {");
      open_.emplace_back(next_block_++, i);
      ++indent_;
      return;
    case PG_OP_END_RANGE:
    case PG_OP_END_IF: {
      uint32_t opener = sdk::sources(program_, in)[0];
      if (open_.empty() || open_.back().second != opener)
        fail(PG_ERR_INVALID_ARGUMENT, i, "does not close the innermost open block");
      open_.pop_back();
      --indent_;
      line("}");
      return;
    }
    case PG_OP_BARRIER: {
      std::string b = dialect_.barrier();
      if (!b.empty()) line(b + ";");
      return;
    }
    case PG_OP_INDEX: {
      const Value& base = src(in, 0);
      const Value& off = src(in, 1);
      if (base.space == PG_ADDR_NONE) fail(PG_ERR_INVALID_ARGUMENT, i, "base is not a pointer");
      if (off.lanes != 1 || !sdk::dtype_is_int(off.dtype))
        fail(PG_ERR_INVALID_ARGUMENT, i, "offset must be a scalar integer");
      v.expr = "p" + id;
      v.dtype = base.dtype;
      v.space = base.space;
      line(ex_.mem_type(base.dtype) + "* " + v.expr + " = " + base.expr + " + " + off.expr + ";");
      return;
    }
    case PG_OP_LOAD:
      emit_load(i, in);
      return;
    case PG_OP_STORE:
      emit_store(i, in);
      return;
    case PG_OP_ATOMIC_ADD:
      emit_atomic_add(i, in);
      return;
    case PG_OP_CAST:
      emit_cast(i, in);
      return;
    case PG_OP_BITCAST:
      emit_bitcast(i, in);
      return;
    case PG_OP_VECTORIZE:
    case PG_OP_GEP:
      emit_vector(i, in);
      return;
    case PG_OP_WMMA: {
      const Value &a = src(in, 0), &b = src(in, 1), &c = src(in, 2);
      if (c.dtype != dt || c.lanes != in.vcount)
        fail(PG_ERR_INVALID_ARGUMENT, i, "the accumulator's type differs from the result's");
      v.expr = "v" + id;
      std::string text;
      if (static_cast<int>(a.raw.size()) == a.lanes && static_cast<int>(b.raw.size()) == b.lanes &&
          a.lanes % 2 == 0 && b.lanes % 2 == 0) {
        // Operands whose bits are known go in as 32-bit words of two lanes, no conversions.
        auto words = [](const Value& x) {
          std::vector<std::string> w;
          for (size_t k = 0; k + 1 < x.raw.size(); k += 2)
            w.push_back("((unsigned)" + x.raw[k] + " | ((unsigned)" + x.raw[k + 1] + " << 16))");
          return w;
        };
        text = dialect_.wmma_words(static_cast<uint32_t>(in.arg.i), v.expr, words(a), words(b),
                                   c.expr, c.lanes);
      }
      if (text.empty())
        text = dialect_.wmma(static_cast<uint32_t>(in.arg.i), v.expr, a.expr, b.expr, c.expr,
                             a.lanes, b.lanes, c.lanes);
      if (text.empty()) fail(PG_ERR_UNSUPPORTED, i, "this dialect has no tensor core");
      line(type_of(dt, in.vcount) + " " + v.expr + ";");
      line(text);
      return;
    }
    default:
      emit_alu(i, in);
      return;
  }
}

void Writer::emit_param(uint32_t i, const pg_instruction& in) {
  Value& v = values_[i];
  const auto dt = static_cast<pg_dtype>(in.dtype);
  const auto slot = static_cast<uint32_t>(in.arg.i);
  v.block = 0;
  v.lanes = 1;
  if (in.op == PG_OP_PARAM_BUFFER) {
    const std::string t = ex_.mem_type(dt);
    v.expr = "b" + std::to_string(i);
    v.space = PG_ADDR_GLOBAL;
    params_ +=
        "  " + t + "* " + v.expr + " = (" + t + "*)" + dialect_.buffer_param(info_, slot) + ";\n";
    return;
  }
  if (dt == PG_DTYPE_VOID) fail(PG_ERR_INVALID_ARGUMENT, i, "a scalar cannot be void");
  const std::string raw = dialect_.scalar_param(info_, slot);
  const std::string value = sdk::dtype_is_float(dt)
                                ? ex_.cast(PG_DTYPE_FLOAT64, dt, "pg_i64_as_f64(" + raw + ")")
                                : ex_.cast(PG_DTYPE_INT64, dt, raw);
  v.expr = "s" + std::to_string(i);
  v.space = PG_ADDR_NONE;
  params_ += "  const " + ex_.reg_type(dt) + " " + v.expr + " = " + value + ";\n";
}

}  // namespace polygrad::cstyle::detail
