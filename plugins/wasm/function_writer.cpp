// FunctionWriter (function_writer.hpp): the grid loops, locals, constants, launch indices,
// scalar parameters and memory access.
#include "function_writer.hpp"

#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include <algorithm>

namespace polygrad::wasm::detail {

using sdk::fail;

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

ByteWriter FunctionWriter::body() {
  plan_registers();
  plan_hoisted_addresses();
  for (int d = 0; d < 3; ++d) index_[d] = new_local(ValType::I32);
  // Grid loops, dim 2 outermost: idx_d counts 0 .. n_d - 1.
  for (int d = 2; d >= 0; --d) {
    const_i32(0);
    set(index_[d]);
    open_loop(index_[d], ValType::I32, param(kCountParams + d), false);
  }
  for (uint32_t i = 0; i < p_.instruction_count; ++i) {
    instruction(i);
    note_sign(i);
    hoist_addresses(i);
  }
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

uint32_t FunctionWriter::new_local(ValType t) {
  locals_.push_back(t);
  return nparams_ + static_cast<uint32_t>(locals_.size()) - 1;
}

void FunctionWriter::get(uint32_t local) {
  code_.u8(op::local_get);
  code_.uleb(local);
}

void FunctionWriter::set(uint32_t local) {
  code_.u8(op::local_set);
  code_.uleb(local);
}

void FunctionWriter::const_i32(int32_t v) {
  code_.u8(op::i32_const);
  code_.sleb(v);
}

void FunctionWriter::open_loop(uint32_t var, ValType t, uint32_t end, bool is_signed) {
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

void FunctionWriter::close_loop(uint32_t var, ValType t) {
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

void FunctionWriter::normalize(uint32_t dt) {
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

LaneRef FunctionWriter::lane(uint32_t i, uint32_t l) const {
  const auto& v = lanes_[i];
  if (v.empty())
    fail(PG_ERR_INVALID_ARGUMENT, "wasm: instruction " + std::to_string(i) + " (" +
                                      sdk::op_name(in(i).op) + ") has no value");
  if (v.size() != 1 && l >= v.size())
    fail(PG_ERR_INVALID_ARGUMENT, "wasm: instruction " + std::to_string(i) + " (" +
                                      sdk::op_name(in(i).op) + ") has no lane " +
                                      std::to_string(l));
  return v[v.size() == 1 ? 0 : l];
}

void FunctionWriter::push_lane(uint32_t i, uint32_t l) {
  LaneRef r = lane(i, l);
  get(r.local);
  if (r.count) extract(r.dtype, r.count, r.lane);
}

uint32_t FunctionWriter::scalar_local(uint32_t i) {
  LaneRef r = lane(i, 0);
  if (lanes_[i].size() != 1)
    fail(PG_ERR_INVALID_ARGUMENT, "wasm: instruction " + std::to_string(i) + " (" +
                                      sdk::op_name(in(i).op) + ") is used as a scalar");
  if (!r.count) return r.local;
  uint32_t local = new_local(repr_of(in(i).dtype).type);  // a lane of a vector, taken out
  push_lane(i, 0);
  set(local);
  return local;
}

void FunctionWriter::set_scalars(uint32_t i, const std::vector<uint32_t>& locals) {
  std::vector<LaneRef> out;
  for (uint32_t local : locals) out.push_back({local, in(i).dtype, 0, 0});
  lanes_[i] = std::move(out);
}

void FunctionWriter::set_vector(uint32_t i, uint32_t v, uint32_t dt, uint32_t n) {
  vec_[i] = v;
  std::vector<LaneRef> out;
  for (uint32_t l = 0; l < n; ++l)
    out.push_back({v, dt, static_cast<uint8_t>(n), static_cast<uint8_t>(l)});
  lanes_[i] = std::move(out);
}

[[noreturn]] void FunctionWriter::unsupported(uint32_t i, const std::string& why) const {
  fail(PG_ERR_UNSUPPORTED, "wasm: instruction " + std::to_string(i) + " (" +
                               sdk::op_name(in(i).op) + " " + sdk::dtype_name(in(i).dtype) +
                               "): " + why);
}

void FunctionWriter::instruction(uint32_t i) {
  const pg_instruction& x = in(i);
  const uint32_t n = x.vcount == 0 ? 1 : x.vcount;
  std::vector<LaneRef>& out = lanes_[i];
  switch (x.op) {
    case PG_OP_PARAM_BUFFER:
      set_scalars(i, {static_cast<uint32_t>(x.arg.i)});
      return;
    case PG_OP_PARAM_SCALAR:
      return param_scalar(i, x);
    case PG_OP_DEFINE_REG:
    case PG_OP_DEFINE_LOCAL: {
      if (x.op == PG_OP_DEFINE_LOCAL) group_memory_ = true;
      if (reg_slot_[i].first) return;  // held in locals
      uint64_t bytes = uint64_t(repr_of(x.dtype).bytes) * uint64_t(x.arg.i);
      uint32_t local = new_local(ValType::I32);
      get(param(kScratchParam));
      const_i32(static_cast<int32_t>(reserve_scratch(bytes, i)));
      code_.u8(op::i32_add);
      set(local);
      set_scalars(i, {local});
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
      open_loop(var, r.type, scalar_local(src(x, 0)), r.is_signed);
      set_scalars(i, {var});
      ++depth_;
      return;
    }
    case PG_OP_END_RANGE: {
      uint32_t r = src(x, 0);
      close_loop(scalar_local(r), repr_of(in(r).dtype).type);
      close_scope();
      return;
    }
    case PG_OP_IF:
      get(scalar_local(src(x, 0)));
      code_.u8(op::if_);
      code_.u8(0x40);
      ++depth_;
      return;
    case PG_OP_END_IF:
      code_.u8(op::end);
      close_scope();
      return;
    case PG_OP_BARRIER:
      group_memory_ = true;
      return;  // one thread per group: nothing to wait for
    case PG_OP_INDEX:
      if (reg_slot_[i].first) return;  // a slot of a register array held in locals
      return index(i, x);
    case PG_OP_LOAD:
      return load(i, x, n);
    case PG_OP_STORE:
      return store(i, x);
    case PG_OP_VECTORIZE:
      if (simd_shape(x.dtype, n)) return vectorize(i, x, n);
      for (uint32_t k = 0; k < x.src_count; ++k) out.push_back(lane(src(x, k), 0));
      if (x.src_count > 1 &&
          std::all_of(out.begin(), out.end(), [&](const LaneRef& r) { return r == out[0]; }))
        splat_[i] = {out[0]};
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

bool FunctionWriter::non_negative(uint32_t i) const {
  if (i >= nonneg_.size()) return false;
  return nonneg_[i];
}

void FunctionWriter::note_sign(uint32_t i) {
  const pg_instruction& x = in(i);
  auto nn = [&](uint32_t k) { return nonneg_[src(x, k)]; };
  bool v = false;
  if (sdk::dtype_is_int(x.dtype) && (x.vcount <= 1)) {
    switch (x.op) {
      case PG_OP_RANGE:
      case PG_OP_SPECIAL:
        v = true;
        break;
      case PG_OP_CONST:
        v = x.arg.i >= 0;
        break;
      case PG_OP_ADD:
      case PG_OP_MUL:
      case PG_OP_IDIV:
        v = nn(0) && nn(1);
        break;
      case PG_OP_MOD:
      case PG_OP_SHR:
        v = nn(0);
        break;
      case PG_OP_AND:
      case PG_OP_MAX:
        v = nn(0) || nn(1);
        break;
      case PG_OP_WHERE:
        v = nn(1) && nn(2);
        break;
      case PG_OP_CAST:  // widening or same width: the value is kept
        v = nn(0) && sdk::dtype_is_int(in(src(x, 0)).dtype) &&
            sdk::dtype_size(in(src(x, 0)).dtype) <= sdk::dtype_size(x.dtype);
        break;
      default:
        break;
    }
  }
  nonneg_[i] = v;
}

void FunctionWriter::index(uint32_t i, const pg_instruction& x) {
  // ptr + off * size, with a constant part c >= 0 of off (off = x + c, x >= 0) left to the
  // accesses' memarg offsets: the address of ptr + x * size is then shared by the INDEXes in
  // scope that use it (the vectors of one row, the rows of a register tile). For x >= 0 and
  // an access inside the memory the two agree; wasm adds a memarg offset without wrapping.
  const uint32_t p = src(x, 0), off = src(x, 1);
  const uint32_t size = repr_of(x.dtype).bytes;
  uint32_t base = off;
  int64_t c = 0;
  const pg_instruction& o = in(off);
  if (o.op == PG_OP_CONST && o.arg.i >= 0) {
    base = kNone;
    c = o.arg.i;
  } else if (o.op == PG_OP_ADD) {
    for (uint32_t k = 0; k < 2 && c == 0; ++k) {
      const pg_instruction& a = in(src(o, k));
      if (a.op == PG_OP_CONST && a.arg.i > 0 && non_negative(src(o, 1 - k))) {
        base = src(o, 1 - k);
        c = a.arg.i;
      }
    }
  }
  if (c > kMaxDisplacement / int64_t{size} || int64_t{disp_[p]} + c * size > kMaxDisplacement) {
    base = off;
    c = 0;
  }
  disp_[i] = disp_[p] + static_cast<uint32_t>(c * size);
  if (base == kNone) return set_scalars(i, {scalar_local(p)});
  for (const Address& a : addresses_)
    if (a.ptr == p && a.base == base) return set_scalars(i, {a.local});
  uint32_t local = new_local(ValType::I32);
  const Hoisted* row = nullptr;  // ptr + a * size, computed after a (plan_hoisted_addresses)
  if (base == off && split_[i].first != kNone)
    for (const Hoisted& h : hoisted_[split_[i].first])
      if (h.ptr == p && h.size == size && h.local != kNone) row = &h;
  if (row != nullptr) {
    get(row->local);
    get(scaled(split_[i].second, size));
  } else {
    get(scalar_local(p));
    push_scaled(base, size);
  }
  code_.u8(op::i32_add);
  set(local);
  addresses_.push_back({p, base, local, depth_});
  set_scalars(i, {local});
}

void FunctionWriter::close_scope() {
  --depth_;
  addresses_.erase(std::remove_if(addresses_.begin(), addresses_.end(),
                                  [&](const Address& a) { return a.depth > depth_; }),
                   addresses_.end());
  scaled_.erase(std::remove_if(scaled_.begin(), scaled_.end(),
                               [&](const Scaled& a) { return a.depth > depth_; }),
                scaled_.end());
}

void FunctionWriter::push_scaled(uint32_t base, uint32_t size) {
  get(scalar_local(base));
  if (repr_of(in(base).dtype).type == ValType::I64) code_.u8(op::i32_wrap_i64);
  if (size != 1) {
    const_i32(static_cast<int32_t>(size));
    code_.u8(op::i32_mul);
  }
}

uint32_t FunctionWriter::scaled(uint32_t base, uint32_t size) {
  for (const Scaled& a : scaled_)
    if (a.base == base && a.size == size) return a.local;
  uint32_t local = new_local(ValType::I32);
  push_scaled(base, size);
  set(local);
  scaled_.push_back({base, size, local, depth_});
  return local;
}

void FunctionWriter::plan_hoisted_addresses() {
  const uint32_t n = p_.instruction_count;
  hoisted_.assign(n, {});
  split_.assign(n, {kNone, kNone});
  std::vector<uint32_t> depth(n, 0);  // the scope each value is defined in
  uint32_t d = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const pg_instruction& x = in(i);
    if (x.op == PG_OP_RANGE || x.op == PG_OP_IF) ++d;  // (a loop counter varies in its loop)
    depth[i] = d;
    if ((x.op == PG_OP_END_RANGE || x.op == PG_OP_END_IF) && d > 0) --d;
  }
  auto scalar_int = [&](uint32_t k) {
    const pg_instruction& v = in(k);
    return sdk::dtype_is_int(v.dtype) && v.vcount <= 1 && v.op != PG_OP_INDEX;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const pg_instruction& x = in(i);
    if (x.op != PG_OP_INDEX || x.src_count != 2 || reg_slot_[i].first) continue;
    const uint32_t p = src(x, 0), off = src(x, 1);
    if (in(p).op != PG_OP_PARAM_BUFFER || in(off).op != PG_OP_ADD) continue;
    const pg_instruction& o = in(off);
    uint32_t a = src(o, 0), b = src(o, 1);
    if (depth[b] < depth[a]) std::swap(a, b);
    // a from a scope around the INDEX's, b from the INDEX's own (the loop's part)
    // (and the buffer named before a, so that its local is there when a is computed)
    if (!scalar_int(a) || !scalar_int(b) || depth[a] >= depth[b] || depth[a] >= depth[i] || p > a)
      continue;
    split_[i] = {a, b};
    const uint32_t size = repr_of(x.dtype).bytes;
    bool known = false;
    for (const Hoisted& h : hoisted_[a]) known = known || (h.ptr == p && h.size == size);
    if (!known) hoisted_[a].push_back({p, size, kNone});
  }
}

void FunctionWriter::hoist_addresses(uint32_t i) {
  for (Hoisted& h : hoisted_[i]) {
    if (lane_count(i) != 1) return;  // (not a scalar after all: the INDEXes compute it whole)
    h.local = new_local(ValType::I32);
    get(scalar_local(h.ptr));
    push_scaled(i, h.size);
    code_.u8(op::i32_add);
    set(h.local);
  }
}

uint32_t FunctionWriter::reserve_scratch(uint64_t bytes, uint32_t i) {
  uint64_t at = (uint64_t(scratch_bytes_) + 15) & ~uint64_t(15);
  if (at + bytes > (uint64_t(1) << 30)) unsupported(i, "per-thread arrays larger than 1 GiB");
  scratch_bytes_ = static_cast<uint32_t>(at + bytes);
  return static_cast<uint32_t>(at);
}

void FunctionWriter::param_scalar(uint32_t i, const pg_instruction& x) {
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
  set_scalars(i, {local});
}

void FunctionWriter::special(uint32_t i, const pg_instruction& x) {
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
  set_scalars(i, {local});
}

void FunctionWriter::constant(uint32_t i, const pg_instruction& x) {
  Repr r = repr_of(x.dtype);
  const uint32_t n = x.vcount ? x.vcount : 1;
  uint32_t local = new_local(r.type);
  push_const(x.dtype, x.arg);
  set(local);
  const LaneRef scalar{local, x.dtype, 0, 0};
  if (simd_shape(x.dtype, n)) {
    uint32_t v = new_local(ValType::V128);
    v128_const(x.dtype, n, x.arg);
    set(v);
    set_vector(i, v, x.dtype, n);
    splat_[i] = {scalar};
    return;
  }
  lanes_[i] = std::vector<LaneRef>(n, scalar);
  if (n > 1) splat_[i] = {scalar};
}

void FunctionWriter::push_const(uint32_t dt, pg_arg a) {
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

void FunctionWriter::load_lane(uint32_t dt, uint32_t ptr, uint32_t l, uint32_t disp) {
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
  code_.memarg(log2_of(r.bytes), disp + uint64_t(l) * r.bytes);
  if (dt == PG_DTYPE_BOOL) normalize(dt);  // any non-zero byte is true
}

void FunctionWriter::store_lane(uint32_t dt, uint32_t ptr, uint32_t value, uint32_t vl, uint32_t l,
                                uint32_t disp) {
  Repr r = repr_of(dt);
  get(ptr);
  push_lane(value, vl);
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
  code_.memarg(log2_of(r.bytes), disp + uint64_t(l) * r.bytes);
}

void FunctionWriter::load(uint32_t i, const pg_instruction& x, uint32_t n) {
  if (reg_slot_[src(x, 0)].first) return load_slot(i, x, n);
  Repr r = repr_of(x.dtype);
  uint32_t ptr = scalar_local(src(x, 0)), disp = disp_[src(x, 0)];
  const bool gated = x.src_count == 3;
  const bool vector = simd_shape(x.dtype, n);
  if (vector && x.dtype != PG_DTYPE_BOOL) {
    uint32_t v = new_local(ValType::V128);
    if (gated) {
      get(scalar_local(src(x, 2)));
      code_.u8(op::if_);
      code_.u8(0x40);
    }
    get(ptr);
    code_.simd(op::simd::v128_load);
    code_.memarg(log2_of(r.bytes), disp);
    set(v);
    if (gated) {
      code_.u8(op::else_);
      push_vector(src(x, 1), x.dtype, n);
      set(v);
      code_.u8(op::end);
    }
    set_vector(i, v, x.dtype, n);
    return;
  }
  std::vector<uint32_t> out;
  for (uint32_t l = 0; l < n; ++l) out.push_back(new_local(r.type));
  if (gated) {
    get(scalar_local(src(x, 2)));
    code_.u8(op::if_);
    code_.u8(0x40);
  }
  for (uint32_t l = 0; l < n; ++l) {
    load_lane(x.dtype, ptr, l, disp);
    set(out[l]);
  }
  if (gated) {
    code_.u8(op::else_);
    for (uint32_t l = 0; l < n; ++l) {
      push_lane(src(x, 1), l);
      set(out[l]);
    }
    code_.u8(op::end);
  }
  if (!vector) return set_scalars(i, out);
  // A bool vector: its lanes into a mask.
  by_lanes(i, x.dtype, n, [&](uint32_t l) { get(out[l]); });
}

void FunctionWriter::store(uint32_t i, const pg_instruction& x) {
  (void)i;
  if (reg_slot_[src(x, 0)].first) return store_slot(x);
  uint32_t ptr = scalar_local(src(x, 0)), value = src(x, 1), disp = disp_[src(x, 0)];
  const uint32_t dt = in(src(x, 0)).dtype;
  const uint32_t n = lane_count(value);
  const bool gated = x.src_count == 3;
  if (gated) {
    get(scalar_local(src(x, 2)));
    code_.u8(op::if_);
    code_.u8(0x40);
  }
  if (vec_[value] != kNone && dt != PG_DTYPE_BOOL && simd_shape(dt, n)) {
    get(ptr);
    get(vec_[value]);
    code_.simd(op::simd::v128_store);
    code_.memarg(log2_of(repr_of(dt).bytes), disp);
  } else {
    for (uint32_t l = 0; l < n; ++l) store_lane(dt, ptr, value, l, l, disp);
  }
  if (gated) code_.u8(op::end);
}

}  // namespace polygrad::wasm::detail
