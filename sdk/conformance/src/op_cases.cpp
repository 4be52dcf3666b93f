// The case table and the elementwise makers (one ALU op over 16 elements, CAST, BITCAST).
#include "op_cases.hpp"

#include <polygrad/plugin.hpp>

#include <cmath>

namespace polygrad::conformance::detail {

namespace {

using Ref = sdk::ProgramBuilder::Ref;
constexpr uint32_t kN = 16;

bool any_dtype(pg_dtype, const pg_capabilities&) {
  return true;
}
bool numeric(pg_dtype dt, const pg_capabilities&) {
  return dt != PG_DTYPE_BOOL;
}
bool floats(pg_dtype dt, const pg_capabilities&) {
  return sdk::dtype_is_float(dt);
}
bool ints(pg_dtype dt, const pg_capabilities&) {
  return sdk::dtype_is_int(dt);
}
bool logic(pg_dtype dt, const pg_capabilities&) {
  return dt == PG_DTYPE_BOOL || sdk::dtype_is_int(dt);
}
bool int32_only(pg_dtype dt, const pg_capabilities&) {
  return dt == PG_DTYPE_INT32;
}
bool int32_groups(pg_dtype dt, const pg_capabilities& caps) {
  return dt == PG_DTYPE_INT32 && caps.max_threads_per_group >= 2 && caps.max_local_dims[0] >= 2;
}
bool vectors(pg_dtype, const pg_capabilities& caps) {
  return caps.max_vector_lanes >= 2;
}
bool vectors_numeric(pg_dtype dt, const pg_capabilities& caps) {
  return dt != PG_DTYPE_BOOL && caps.max_vector_lanes >= 2;
}

bool is_comparison(pg_op op) {
  return op == PG_OP_CMPLT || op == PG_OP_CMPNE || op == PG_OP_CMPEQ;
}

/// out[i] = op(x[i]) with a single input buffer; `expect` gives the reference per element.
template <class Expect>
void unary_kernel(Kernel& k, pg_op op, pg_dtype in, pg_dtype out, const std::vector<Value>& x,
                  Expect expect) {
  auto& b = k.program;
  Ref o = b.param_buffer(0, out);
  Ref p = b.param_buffer(1, in);
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref v = b.load(b.index(p, i));
  b.store(b.index(o, i), b.cast(op, out, v));
  k.buffers.emplace_back(in, x);
  for (uint32_t e = 0; e < kN; ++e) {
    Value src = k.buffers[1].get(e);
    k.expected.set(e, expect(src, e));
    k.inputs.push_back(format_value(in, src));
  }
}

}  // namespace

void make_elementwise(const OpCase& c, pg_dtype dt, const pg_capabilities&,
                      std::vector<Kernel>& out) {
  int nsrc = sdk::op_source_count(c.op);
  pg_dtype rdt = is_comparison(c.op) ? PG_DTYPE_BOOL : dt;
  Kernel k = start_kernel(c, dt, rdt, kN);
  auto& b = k.program;
  Ref o = b.param_buffer(0, rdt);
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  std::vector<Ref> loaded;
  for (int s = 0; s < nsrc; ++s) {
    bool condition = c.op == PG_OP_WHERE && s == 0;
    pg_dtype sdt = condition ? PG_DTYPE_BOOL : dt;
    std::vector<Value> v = condition ? sample_values(PG_DTYPE_BOOL, Inputs::edge, 2)
                           : (c.op == PG_OP_SHR && s == 0) ? sample_values(dt, Inputs::edge, 0)
                                                           : sample_values(dt, c.inputs, s);
    if (c.op == PG_OP_MULACC && s == 2)  // no cancellation: the tolerance stays meaningful
      for (Value& x : v) x = sdk::dtype_is_float(dt) ? float_value(std::fabs(x.f)) : x;
    k.buffers.emplace_back(sdt, v);
    Ref p = b.param_buffer(1 + s, sdt);
    loaded.push_back(b.load(b.index(p, i)));
  }
  Ref r = nsrc == 1   ? b.unary(c.op, loaded[0])
          : nsrc == 2 ? b.binary(c.op, loaded[0], loaded[1])
                      : b.ternary(c.op, loaded[0], loaded[1], loaded[2]);
  b.store(b.index(o, i), r);
  for (uint32_t e = 0; e < kN; ++e) {
    Value src[3];
    std::string text = std::string(sdk::op_name(c.op)) + "(";
    for (int s = 0; s < nsrc; ++s) {
      src[s] = k.buffers[1 + s].get(e);
      text += (s ? ", " : "") + format_value(k.buffers[1 + s].dtype, src[s]);
    }
    k.expected.set(e, reference_alu(c.op, dt, rdt, src));
    k.inputs.push_back(text + ")");
  }
  out.push_back(std::move(k));
}

void make_cast(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
               std::vector<Kernel>& out) {
  static const double candidates[] = {-100.75, -3.5,   -1,  -0.5, 0,    0.5, 1,    2.9,
                                      7,       100.25, 127, 3,    -7.9, 42,  0.25, 12.5};
  for (uint32_t t = 1; t < PG_DTYPE_COUNT; ++t) {
    pg_dtype to = static_cast<pg_dtype>(t);
    if (to == dt || !(caps.dtype_mask & (uint64_t{1} << t))) continue;
    std::vector<Value> x;
    for (double v : candidates) {
      bool src_ok = sdk::dtype_is_float(dt) ||
                    (std::trunc(v) == v && (sdk::dtype_kind(dt) != 'u' || v >= 0) &&
                     (dt != PG_DTYPE_BOOL || v == 0 || v == 1));
      // float -> unsigned is undefined in C below zero
      bool dst_ok = !sdk::dtype_is_float(dt) || sdk::dtype_kind(to) != 'u' || v > -1;
      if (src_ok && dst_ok) x.push_back(from_double(dt, v));
    }
    for (size_t n = x.size(); x.size() < kN;) x.push_back(x[x.size() % n]);
    Kernel k = start_kernel(c, dt, to, kN,
                            std::string("CAST ") + sdk::dtype_name(dt) + "->" + sdk::dtype_name(to),
                            std::string("to_") + sdk::dtype_name(to));
    unary_kernel(k, PG_OP_CAST, dt, to, x,
                 [&](Value v, uint32_t) { return reference_alu(PG_OP_CAST, dt, to, &v); });
    out.push_back(std::move(k));
  }
}

void make_bitcast(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
                  std::vector<Kernel>& out) {
  for (uint32_t t = 1; t < PG_DTYPE_COUNT; ++t) {
    pg_dtype to = static_cast<pg_dtype>(t);
    if (to == dt || to == PG_DTYPE_BOOL || sdk::dtype_size(to) != sdk::dtype_size(dt) ||
        !(caps.dtype_mask & (uint64_t{1} << t)))
      continue;
    Kernel k = start_kernel(
        c, dt, to, kN, std::string("BITCAST ") + sdk::dtype_name(dt) + "->" + sdk::dtype_name(to),
        std::string("to_") + sdk::dtype_name(to));
    unary_kernel(k, PG_OP_BITCAST, dt, to, sample_values(dt, Inputs::edge, 0),
                 [](Value v, uint32_t) { return v; });
    k.expected.bytes = k.buffers[1].bytes;  // the bits themselves, compared bit for bit
    k.tolerance.bitwise = true;
    out.push_back(std::move(k));
  }
}

const std::vector<OpCase>& op_cases() {
  using enum Required;
  static const std::vector<OpCase> cases = {
      // name, rows, op, applies, required, maker, inputs, ulps
      {"copy",
       {PG_OP_PARAM_BUFFER, PG_OP_INDEX, PG_OP_LOAD, PG_OP_STORE},
       PG_OP_LOAD,
       any_dtype,
       always,
       make_copy,
       Inputs::edge},
      {"LOAD.gated", {PG_OP_LOAD}, PG_OP_LOAD, any_dtype, always, make_gated_load},
      {"STORE.gated", {PG_OP_STORE}, PG_OP_STORE, any_dtype, always, make_gated_store},
      {"CONST", {PG_OP_CONST}, PG_OP_CONST, any_dtype, always, make_const},
      {"PARAM_SCALAR",
       {PG_OP_PARAM_SCALAR},
       PG_OP_PARAM_SCALAR,
       any_dtype,
       always,
       make_param_scalar},
      {"SPECIAL.global3d", {PG_OP_SPECIAL}, PG_OP_SPECIAL, int32_only, always, make_special},
      {"SPECIAL.groups", {PG_OP_SPECIAL}, PG_OP_SPECIAL, int32_groups, always, make_special},
      {"RANGE.accumulate",
       {PG_OP_RANGE, PG_OP_END_RANGE, PG_OP_DEFINE_REG},
       PG_OP_RANGE,
       numeric,
       always,
       make_range},
      {"IF", {PG_OP_IF, PG_OP_END_IF}, PG_OP_IF, any_dtype, always, make_if},
      {"DEFINE_LOCAL.barrier",
       {PG_OP_DEFINE_LOCAL, PG_OP_BARRIER},
       PG_OP_DEFINE_LOCAL,
       any_dtype,
       with_local_memory,
       make_local},
      {"NEG", {PG_OP_NEG}, PG_OP_NEG, numeric, always, make_elementwise},
      {"NOT", {PG_OP_NOT}, PG_OP_NOT, logic, always, make_elementwise, Inputs::edge},
      {"RECIP", {PG_OP_RECIP}, PG_OP_RECIP, floats, always, make_elementwise},
      {"SQRT", {PG_OP_SQRT}, PG_OP_SQRT, floats, always, make_elementwise},
      {"EXP2",
       {PG_OP_EXP2},
       PG_OP_EXP2,
       floats,
       unless_decomposed,
       make_elementwise,
       Inputs::arith,
       4},
      {"LOG2",
       {PG_OP_LOG2},
       PG_OP_LOG2,
       floats,
       unless_decomposed,
       make_elementwise,
       Inputs::arith,
       4},
      {"SIN",
       {PG_OP_SIN},
       PG_OP_SIN,
       floats,
       unless_decomposed,
       make_elementwise,
       Inputs::arith,
       4},
      {"TRUNC", {PG_OP_TRUNC}, PG_OP_TRUNC, floats, always, make_elementwise},
      {"ADD", {PG_OP_ADD}, PG_OP_ADD, numeric, always, make_elementwise},
      {"SUB", {PG_OP_SUB}, PG_OP_SUB, numeric, always, make_elementwise},
      {"MUL", {PG_OP_MUL}, PG_OP_MUL, numeric, always, make_elementwise},
      {"FDIV", {PG_OP_FDIV}, PG_OP_FDIV, floats, always, make_elementwise},
      {"IDIV", {PG_OP_IDIV}, PG_OP_IDIV, ints, always, make_elementwise, Inputs::division},
      {"MOD", {PG_OP_MOD}, PG_OP_MOD, ints, always, make_elementwise, Inputs::division},
      {"MAX", {PG_OP_MAX}, PG_OP_MAX, numeric, always, make_elementwise, Inputs::edge},
      {"CMPLT", {PG_OP_CMPLT}, PG_OP_CMPLT, numeric, always, make_elementwise, Inputs::edge},
      {"CMPNE", {PG_OP_CMPNE}, PG_OP_CMPNE, any_dtype, always, make_elementwise, Inputs::edge},
      {"CMPEQ", {PG_OP_CMPEQ}, PG_OP_CMPEQ, any_dtype, always, make_elementwise, Inputs::edge},
      {"AND", {PG_OP_AND}, PG_OP_AND, logic, always, make_elementwise, Inputs::edge},
      {"OR", {PG_OP_OR}, PG_OP_OR, logic, always, make_elementwise, Inputs::edge},
      {"XOR", {PG_OP_XOR}, PG_OP_XOR, logic, always, make_elementwise, Inputs::edge},
      {"SHL", {PG_OP_SHL}, PG_OP_SHL, ints, always, make_elementwise, Inputs::shift},
      {"SHR", {PG_OP_SHR}, PG_OP_SHR, ints, always, make_elementwise, Inputs::shift},
      {"WHERE", {PG_OP_WHERE}, PG_OP_WHERE, any_dtype, always, make_elementwise, Inputs::edge},
      {"MULACC", {PG_OP_MULACC}, PG_OP_MULACC, numeric, always, make_elementwise, Inputs::arith, 2},
      {"CAST", {PG_OP_CAST}, PG_OP_CAST, any_dtype, always, make_cast},
      {"BITCAST", {PG_OP_BITCAST}, PG_OP_BITCAST, numeric, never, make_bitcast},
      // Vector cases run at every width vector_widths() gives: "LOAD.vec4", "LOAD.vec8"...
      // Required: max_vector_lanes is the largest vcount the renderer accepts (plugin.h).
      {"LOAD.vec", {PG_OP_LOAD, PG_OP_STORE}, PG_OP_LOAD, vectors, always, make_vector_copy},
      {"STORE.stream.vec",
       {PG_OP_LOAD, PG_OP_STORE},
       PG_OP_STORE,
       vectors,
       always,
       make_vector_copy},
      {"VECTORIZE.vec", {PG_OP_VECTORIZE}, PG_OP_VECTORIZE, vectors, always, make_vectorize},
      {"GEP.vec", {PG_OP_GEP}, PG_OP_GEP, vectors, always, make_gep},
      {"CONST.vec", {PG_OP_CONST}, PG_OP_CONST, vectors, always, make_vector_alu},
      {"ADD.vec", {PG_OP_ADD}, PG_OP_ADD, vectors_numeric, always, make_vector_alu},
      {"WHERE.vec",
       {PG_OP_WHERE, PG_OP_CMPLT},
       PG_OP_WHERE,
       vectors_numeric,
       always,
       make_vector_alu,
       Inputs::edge},
      {"MAX.vec", {PG_OP_MAX}, PG_OP_MAX, vectors_numeric, always, make_vector_alu, Inputs::edge},
      {"CMPNE.vec",
       {PG_OP_WHERE, PG_OP_CMPNE},
       PG_OP_CMPNE,
       vectors,
       always,
       make_vector_alu,
       Inputs::edge},
      {"CMPEQ.vec",
       {PG_OP_WHERE, PG_OP_CMPEQ},
       PG_OP_CMPEQ,
       vectors,
       always,
       make_vector_alu,
       Inputs::edge},
  };
  return cases;
}

}  // namespace polygrad::conformance::detail
