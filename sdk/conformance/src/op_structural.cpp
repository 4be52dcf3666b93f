// Makers of the structural cases: memory (copy, gated LOAD/STORE, vectors), constants,
// scalar parameters, launch indices, loops with register accumulators, IF blocks, local
// memory with barriers. Each builds one small program and computes its expected output.
#include <polygrad/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

#include "op_cases.hpp"

namespace polygrad::conformance::detail {

namespace {

using Ref = sdk::ProgramBuilder::Ref;
constexpr uint32_t kN = 16;

Ref int32(sdk::ProgramBuilder& b, int64_t v) {
  return b.const_i(PG_DTYPE_INT32, v);
}

/// A kernel of case `c` over kN elements of `dt`; `o` is its output (slot 0).
Kernel start(const OpCase& c, pg_dtype dt, Ref& o) {
  Kernel k = start_kernel(c, dt, dt, kN);
  o = k.program.param_buffer(0, dt);
  return k;
}

/// Adds an input buffer of `values` as slot `slot`; returns its PARAM_BUFFER.
Ref input(Kernel& k, uint32_t slot, pg_dtype dt, const std::vector<Value>& values) {
  k.buffers.emplace_back(dt, values);
  return k.program.param_buffer(slot, dt);
}

/// Signed extremes, unsigned maximum, bool true, or a float that is awkward to print.
std::vector<Value> constants(pg_dtype dt) {
  if (dt == PG_DTYPE_BOOL) return {int_value(1), int_value(0), int_value(1), int_value(0)};
  if (sdk::dtype_is_float(dt))
    return {from_double(dt, -2.5), from_double(dt, std::numeric_limits<double>::infinity()),
            from_double(dt, std::numeric_limits<double>::quiet_NaN()), from_double(dt, 1e-3)};
  int64_t bits = sdk::dtype_size(dt) * 8;
  if (sdk::dtype_kind(dt) == 'u')
    return {int_value(wrap_int(dt, -1)), int_value(0), int_value(1), int_value(42)};
  int64_t min = wrap_int(dt, int64_t{1} << (bits - 1));
  return {int_value(min),
          int_value(wrap_int(dt, static_cast<int64_t>(static_cast<uint64_t>(min) - 1))),
          int_value(-1), int_value(42)};
}

int64_t scalar_bits(pg_dtype dt, Value v) {
  if (!sdk::dtype_is_float(dt)) return v.i;
  int64_t bits;
  std::memcpy(&bits, &v.f, sizeof bits);
  return bits;
}

}  // namespace

void make_copy(const OpCase& c, pg_dtype dt, const pg_capabilities&, std::vector<Kernel>& out) {
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  Ref a = input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(o, i), b.load(b.index(a, i)));
  k.expected = k.buffers[1];
  out.push_back(std::move(k));
}

void make_gated_load(const OpCase& c, pg_dtype dt, const pg_capabilities&,
                     std::vector<Kernel>& out) {
  const uint32_t valid = 10;
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  std::vector<Value> a_values = sample_values(dt, Inputs::edge, 0);
  a_values.resize(valid);  // the gated-off indices below point far past this buffer
  Ref a = input(k, 1, dt, a_values);
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref gate = b.binary(PG_OP_CMPLT, i, int32(b, valid));
  Ref far = b.binary(PG_OP_ADD, i, int32(b, int64_t{1} << 26));
  Ref idx = b.ternary(PG_OP_WHERE, gate, i, far);
  Value alt = constants(dt)[3];
  Ref v = b.load_gated(b.index(a, idx), const_value(b, dt, alt), gate);
  b.store(b.index(o, i), v);
  for (uint32_t e = 0; e < kN; ++e) k.expected.set(e, e < valid ? a_values[e] : alt);
  out.push_back(std::move(k));
}

void make_gated_store(const OpCase& c, pg_dtype dt, const pg_capabilities&,
                      std::vector<Kernel>& out) {
  const uint32_t valid = 10;
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  Ref a = input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref gate = b.binary(PG_OP_CMPLT, i, int32(b, valid));
  b.store_gated(b.index(o, i), b.load(b.index(a, i)), gate);
  for (uint32_t e = 0; e < valid; ++e) k.expected.set(e, k.buffers[1].get(e));
  out.push_back(std::move(k));
}

void make_const(const OpCase& c, pg_dtype dt, const pg_capabilities&, std::vector<Kernel>& out) {
  Ref o;
  Kernel k = start(c, dt, o);
  k.shape.global = {1, 1, 1};
  auto& b = k.program;
  std::vector<Value> values = constants(dt);
  for (uint32_t e = 0; e < values.size(); ++e) {
    b.store(b.index(o, int32(b, e)), const_value(b, dt, values[e]));
    k.expected.set(e, values[e]);
  }
  out.push_back(std::move(k));
}

void make_param_scalar(const OpCase& c, pg_dtype dt, const pg_capabilities&,
                       std::vector<Kernel>& out) {
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  std::vector<Value> consts = constants(dt);
  Value s0 = sdk::dtype_is_float(dt) ? from_double(dt, -2.5) : consts[0];
  Value s1 = sdk::dtype_is_float(dt) ? from_double(dt, 0.375) : consts[3];
  Ref p0 = b.param_scalar(0, dt), p1 = b.param_scalar(1, dt);
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref v = b.ternary(PG_OP_WHERE, b.binary(PG_OP_CMPLT, i, int32(b, 2)), p0, p1);
  b.store(b.index(o, i), v);
  k.shape.scalars = {scalar_bits(dt, s0), scalar_bits(dt, s1)};
  for (uint32_t e = 0; e < kN; ++e) k.expected.set(e, e < 2 ? s0 : s1);
  out.push_back(std::move(k));
}

void make_special(const OpCase& c, pg_dtype dt, const pg_capabilities&, std::vector<Kernel>& out) {
  bool groups = std::string(c.name) == "SPECIAL.groups";
  // global3d: 4x3x2 single-thread groups; groups: 3x2 groups of 2 threads along x.
  const uint32_t nx = groups ? 6 : 4, ny = groups ? 2 : 3, nz = groups ? 1 : 2;
  Kernel k = start_kernel(c, dt, PG_DTYPE_INT32, nx * ny * nz);
  auto& b = k.program;
  Ref o = b.param_buffer(0, PG_DTYPE_INT32);
  Ref x = b.special(PG_SPECIAL_GLOBAL, 0), y = b.special(PG_SPECIAL_GLOBAL, 1);
  Ref z = b.special(PG_SPECIAL_GLOBAL, 2);
  auto mul = [&](Ref r, int64_t m) { return b.binary(PG_OP_MUL, r, int32(b, m)); };
  auto add = [&](Ref l, Ref r) { return b.binary(PG_OP_ADD, l, r); };
  Ref idx = add(mul(add(mul(z, ny), y), nx), x);
  Ref value = add(add(mul(x, 1000), mul(y, 100000)), mul(z, 10000000));
  if (groups) {
    value =
        add(value, add(mul(b.special(PG_SPECIAL_GROUP, 0), 10), b.special(PG_SPECIAL_LOCAL, 0)));
    b.set_local_size(2, 1, 1);
    k.shape.global = {3, 2, 1};
    k.shape.local = {2, 1, 1};
  } else {
    k.shape.global = {nx, ny, nz};
  }
  for (uint32_t zz = 0; zz < nz; ++zz)
    for (uint32_t yy = 0; yy < ny; ++yy)
      for (uint32_t xx = 0; xx < nx; ++xx) {
        int64_t v = xx * 1000 + yy * 100000 + zz * 10000000;
        if (groups) v += (xx / 2) * 10 + xx % 2;
        k.expected.set((zz * ny + yy) * nx + xx, int_value(v));
      }
  b.store(b.index(o, idx), value);
  out.push_back(std::move(k));
}

void make_range(const OpCase& c, pg_dtype dt, const pg_capabilities&, std::vector<Kernel>& out) {
  const uint32_t m = 5;
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  std::vector<Value> a_values(kN * m);
  for (uint32_t r = 0; r < m; ++r) {
    std::vector<Value> column = sample_values(dt, Inputs::arith, static_cast<int>(r));
    for (uint32_t e = 0; e < kN; ++e) a_values[e * m + r] = column[e];
  }
  Ref a = input(k, 1, dt, a_values);
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref acc = b.index(b.define_reg(dt, 1), int32(b, 0));
  b.store(acc, const_value(b, dt, from_double(dt, 0)));
  Ref r = b.range(int32(b, m), 0);
  Ref v = b.load(b.index(a, b.binary(PG_OP_ADD, b.binary(PG_OP_MUL, i, int32(b, m)), r)));
  b.store(acc, b.binary(PG_OP_ADD, b.load(acc), v));
  b.end_range(r);
  b.store(b.index(o, i), b.load(acc));
  for (uint32_t e = 0; e < kN; ++e) {
    Value sum = from_double(dt, 0);
    for (uint32_t j = 0; j < m; ++j) {
      Value src[3] = {sum, k.buffers[1].get(e * m + j), {}};
      sum = reference_alu(PG_OP_ADD, dt, dt, src);
    }
    k.expected.set(e, sum);
  }
  out.push_back(std::move(k));
}

void make_if(const OpCase& c, pg_dtype dt, const pg_capabilities&, std::vector<Kernel>& out) {
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  Ref a = input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
  Ref bb = input(k, 2, dt, sample_values(dt, Inputs::edge, 1));
  Ref i = b.special(PG_SPECIAL_GLOBAL, 0);
  Ref va = b.load(b.index(a, i));
  Ref cond = b.binary(PG_OP_CMPNE, va, b.load(b.index(bb, i)));
  Ref block = b.if_(cond);
  b.store(b.index(o, i), va);
  b.end_if(block);
  for (uint32_t e = 0; e < kN; ++e) {
    Value src[3] = {k.buffers[1].get(e), k.buffers[2].get(e), {}};
    if (reference_alu(PG_OP_CMPNE, dt, PG_DTYPE_BOOL, src).i) k.expected.set(e, src[0]);
  }
  out.push_back(std::move(k));
}

void make_local(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
                std::vector<Kernel>& out) {
  bool shared = (caps.flags & PG_CAP_LOCAL_MEMORY) && caps.max_local_dims[0] >= 4 &&
                caps.max_threads_per_group >= 4;
  const uint32_t l = shared ? 4 : 1, groups = 4;
  Ref o;
  Kernel k = start(c, dt, o);
  auto& b = k.program;
  Ref a = input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
  Ref lm = b.define_local(dt, l);
  Ref lid = b.special(PG_SPECIAL_LOCAL, 0), gid = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(lm, lid), b.load(b.index(a, gid)));
  b.barrier();
  Ref mirrored = b.binary(PG_OP_SUB, int32(b, l - 1), lid);
  b.store(b.index(o, gid), b.load(b.index(lm, mirrored)));
  b.set_local_size(l, 1, 1);
  k.shape.global = {groups, 1, 1};
  k.shape.local = {l, 1, 1};
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t t = 0; t < l; ++t) k.expected.set(g * l + t, k.buffers[1].get(g * l + l - 1 - t));
  out.push_back(std::move(k));
}

namespace {

/// A kernel of vector case `c` at `lanes` lanes over `n` elements (a multiple of lanes, at
/// least kN): n / lanes launches, `base` = lanes * global index. Labelled "<case><lanes>
/// <dtype>", e.g. "ADD.vec8 float32".
Kernel start_vector(const OpCase& c, pg_dtype dt, uint32_t lanes, Ref& o, Ref& base) {
  const uint32_t n = std::max(kN, 2 * lanes);
  const std::string width = std::to_string(lanes);
  std::string suffix = "x";
  suffix += width;
  Kernel k = start_kernel(c, dt, dt, n, c.name + width + " " + sdk::dtype_name(dt), suffix);
  o = k.program.param_buffer(0, dt);
  k.shape.global = {n / lanes, 1, 1};
  base =
      k.program.binary(PG_OP_MUL, k.program.special(PG_SPECIAL_GLOBAL, 0), int32(k.program, lanes));
  return k;
}

/// `values` repeated to `n` elements.
std::vector<Value> cycled(std::vector<Value> values, size_t n) {
  for (size_t k = 0; values.size() < n; ++k) values.push_back(values[k]);
  return values;
}

/// An input buffer for a vector kernel: `values` cycled to the output's length.
Ref vector_input(Kernel& k, uint32_t slot, pg_dtype dt, const std::vector<Value>& values) {
  return input(k, slot, dt, cycled(values, k.expected.size()));
}

/// Element e of a vector of `lanes` lanes read back to front: the lane that fills it.
size_t mirrored(size_t e, uint32_t lanes) {
  return e / lanes * lanes + lanes - 1 - e % lanes;
}

}  // namespace

std::vector<uint32_t> vector_widths(const pg_capabilities& caps) {
  const uint32_t most = std::min<uint32_t>(caps.max_vector_lanes, 255);  // vcount is 8 bits
  std::vector<uint32_t> widths;
  for (uint32_t w = 2; w <= most; w *= 2) widths.push_back(w);
  if (most >= 2 && widths.back() != most) widths.push_back(most);
  return widths;
}

void make_vector_copy(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
                      std::vector<Kernel>& out) {
  const bool stream = c.op == PG_OP_STORE;
  for (uint32_t lanes : vector_widths(caps)) {
    Ref o, base;
    Kernel k = start_vector(c, dt, lanes, o, base);
    auto& b = k.program;
    Ref a = vector_input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
    b.store(b.index(o, base), b.load(b.index(a, base), static_cast<uint8_t>(lanes)),
            stream ? PG_STORE_STREAM : 0);
    k.expected = k.buffers[1];
    out.push_back(std::move(k));
  }
}

void make_vectorize(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
                    std::vector<Kernel>& out) {
  for (uint32_t lanes : vector_widths(caps)) {
    Ref o, base;
    Kernel k = start_vector(c, dt, lanes, o, base);
    auto& b = k.program;
    Ref a = vector_input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
    std::vector<Ref> loaded;
    for (uint32_t lane = lanes; lane-- > 0;)
      loaded.push_back(b.load(b.index(a, b.binary(PG_OP_ADD, base, int32(b, lane)))));
    b.store(b.index(o, base), b.vectorize(loaded));
    for (size_t e = 0; e < k.expected.size(); ++e)
      k.expected.set(e, k.buffers[1].get(mirrored(e, lanes)));
    out.push_back(std::move(k));
  }
}

void make_gep(const OpCase& c, pg_dtype dt, const pg_capabilities& caps, std::vector<Kernel>& out) {
  for (uint32_t lanes : vector_widths(caps)) {
    Ref o, base;
    Kernel k = start_vector(c, dt, lanes, o, base);
    auto& b = k.program;
    Ref a = vector_input(k, 1, dt, sample_values(dt, Inputs::edge, 0));
    Ref v = b.load(b.index(a, base), static_cast<uint8_t>(lanes));
    for (uint32_t lane = 0; lane < lanes; ++lane)
      b.store(b.index(o, b.binary(PG_OP_ADD, base, int32(b, lane))), b.gep(v, lanes - 1 - lane));
    for (size_t e = 0; e < k.expected.size(); ++e)
      k.expected.set(e, k.buffers[1].get(mirrored(e, lanes)));
    out.push_back(std::move(k));
  }
}

void make_vector_alu(const OpCase& c, pg_dtype dt, const pg_capabilities& caps,
                     std::vector<Kernel>& out) {
  for (uint32_t lanes : vector_widths(caps)) {
    Ref o, base;
    Kernel k = start_vector(c, dt, lanes, o, base);
    auto& b = k.program;
    const auto vcount = static_cast<uint8_t>(lanes);
    if (c.op == PG_OP_CONST) {
      Value v = constants(dt)[3];
      b.store(b.index(o, base), const_value(b, dt, v, vcount));
      for (size_t e = 0; e < k.expected.size(); ++e) k.expected.set(e, v);
      out.push_back(std::move(k));
      continue;
    }
    Ref a = vector_input(k, 1, dt, sample_values(dt, c.inputs, 0));
    Ref bb = vector_input(k, 2, dt, sample_values(dt, c.inputs, 1));
    Ref va = b.load(b.index(a, base), vcount), vb = b.load(b.index(bb, base), vcount);
    // ADD and MAX directly; a comparison (CMPLT for the WHERE case) selects between a and b.
    const bool direct = c.op == PG_OP_ADD || c.op == PG_OP_MAX;
    const pg_op cmp = c.op == PG_OP_WHERE ? PG_OP_CMPLT : c.op;
    Ref r = direct ? b.binary(c.op, va, vb) : b.ternary(PG_OP_WHERE, b.binary(cmp, va, vb), va, vb);
    b.store(b.index(o, base), r);
    for (size_t e = 0; e < k.expected.size(); ++e) {
      Value src[3] = {k.buffers[1].get(e), k.buffers[2].get(e), {}};
      if (direct) {
        k.expected.set(e, reference_alu(c.op, dt, dt, src));
      } else {
        bool pick_a = reference_alu(cmp, dt, PG_DTYPE_BOOL, src).i != 0;
        k.expected.set(e, pick_a ? src[0] : src[1]);
      }
    }
    out.push_back(std::move(k));
  }
}

}  // namespace polygrad::conformance::detail
