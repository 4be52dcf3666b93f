// The template plugin's "device": a small interpreter over the kernel-program op set. Every
// instruction result is up to kMaxLanes lanes; integers are kept sign- or zero-extended to 64
// bits, floats as double rounded to float after every float32 op, so results match C.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "program.hpp"

namespace template_plugin {

using polygrad::sdk::dtype_kind;
using polygrad::sdk::dtype_size;
using polygrad::sdk::fail;

namespace {

union Lane {
  int64_t i;
  double f;
};

/// A pointer value: memory, its length in elements, and the element it points at.
struct Pointer {
  unsigned char* base = nullptr;
  int64_t count = 0;
  int64_t index = 0;
};

struct Value {
  std::array<Lane, kMaxLanes> lane{};
  Pointer ptr;
};

int64_t wrap(uint32_t dt, uint64_t v) {
  if (dt == PG_DTYPE_BOOL) return v != 0;
  uint32_t bits = dtype_size(dt) * 8;
  if (bits == 64) return static_cast<int64_t>(v);
  if (dtype_kind(dt) == 'u') return static_cast<int64_t>(v & ((uint64_t{1} << bits) - 1));
  return static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}

Lane round_to(uint32_t dt, double f) {
  Lane l;
  l.f = dt == PG_DTYPE_FLOAT32 ? static_cast<float>(f) : f;
  return l;
}

Lane int_lane(uint32_t dt, uint64_t v) {
  Lane l;
  l.i = wrap(dt, v);
  return l;
}

Lane read(uint32_t dt, const unsigned char* p) {
  if (dt == PG_DTYPE_FLOAT32) {
    float f;
    std::memcpy(&f, p, 4);
    return round_to(dt, f);
  }
  if (dt == PG_DTYPE_FLOAT64) {
    double f;
    std::memcpy(&f, p, 8);
    return round_to(dt, f);
  }
  uint64_t raw = 0;
  std::memcpy(&raw, p, dtype_size(dt));
  return int_lane(dt, raw);
}

void write(uint32_t dt, Lane v, unsigned char* p) {
  if (dt == PG_DTYPE_FLOAT32) {
    float f = static_cast<float>(v.f);
    std::memcpy(p, &f, 4);
  } else if (dt == PG_DTYPE_FLOAT64) {
    std::memcpy(p, &v.f, 8);
  } else {
    std::memcpy(p, &v.i, dtype_size(dt));  // little-endian: the low bytes
  }
}

Lane convert(uint32_t from, uint32_t to, Lane v) {
  bool from_float = dtype_kind(from) == 'f';
  if (dtype_kind(to) == 'f') {
    double f = from_float                ? v.f
               : dtype_kind(from) == 'u' ? static_cast<double>(static_cast<uint64_t>(v.i))
                                         : static_cast<double>(v.i);
    return round_to(to, f);
  }
  if (!from_float) return int_lane(to, static_cast<uint64_t>(v.i));
  if (to == PG_DTYPE_BOOL) return int_lane(to, v.f != 0);
  double t = std::trunc(v.f);  // C: float -> int truncates; out of range is undefined
  if (!(std::fabs(t) < 1.8e19)) return int_lane(to, 0);
  return int_lane(
      to, t < 0 ? static_cast<uint64_t>(static_cast<int64_t>(t)) : static_cast<uint64_t>(t));
}

Lane float_op(uint32_t op, uint32_t dt, double a, double b, double c) {
  switch (op) {
    case PG_OP_NEG:
      return round_to(dt, -a);
    case PG_OP_RECIP:
      return round_to(dt, 1.0 / a);
    case PG_OP_SQRT:
      return round_to(dt, std::sqrt(a));
    case PG_OP_EXP2:
      return round_to(dt, std::exp2(a));
    case PG_OP_LOG2:
      return round_to(dt, std::log2(a));
    case PG_OP_SIN:
      return round_to(dt, std::sin(a));
    case PG_OP_TRUNC:
      return round_to(dt, std::trunc(a));
    case PG_OP_ADD:
      return round_to(dt, a + b);
    case PG_OP_SUB:
      return round_to(dt, a - b);
    case PG_OP_MUL:
      return round_to(dt, a * b);
    case PG_OP_FDIV:
      return round_to(dt, a / b);
    case PG_OP_MULACC:
      return round_to(dt, a * b + c);
    case PG_OP_MAX:
      return round_to(dt, std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN()
                                                         : std::max(a, b));
    case PG_OP_CMPLT:
      return int_lane(PG_DTYPE_BOOL, a < b);
    case PG_OP_CMPNE:
      return int_lane(PG_DTYPE_BOOL, a != b);
    default:
      return int_lane(PG_DTYPE_BOOL, a == b);  // CMPEQ
  }
}

Lane int_op(uint32_t op, uint32_t dt, uint32_t result_dt, int64_t a, int64_t b, int64_t c) {
  bool is_unsigned = dtype_kind(dt) == 'u';
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if ((op == PG_OP_IDIV || op == PG_OP_MOD) && b == 0)
    fail(PG_ERR_LAUNCH, "template: integer division by zero");
  switch (op) {
    case PG_OP_NEG:
      return int_lane(dt, 0 - ua);
    case PG_OP_NOT:
      return int_lane(dt, dt == PG_DTYPE_BOOL ? !a : ~ua);
    case PG_OP_ADD:
      return int_lane(dt, ua + ub);
    case PG_OP_SUB:
      return int_lane(dt, ua - ub);
    case PG_OP_MUL:
      return int_lane(dt, ua * ub);
    case PG_OP_MULACC:
      return int_lane(dt, ua * ub + static_cast<uint64_t>(c));
    case PG_OP_IDIV:
      if (is_unsigned) return int_lane(dt, ua / ub);
      return int_lane(dt, b == -1 ? 0 - ua : static_cast<uint64_t>(a / b));
    case PG_OP_MOD:
      if (is_unsigned) return int_lane(dt, ua % ub);
      return int_lane(dt, b == -1 ? 0 : static_cast<uint64_t>(a % b));
    case PG_OP_MAX:
      return int_lane(dt, is_unsigned ? std::max(ua, ub) : std::max(a, b));
    case PG_OP_CMPLT:
      return int_lane(result_dt, is_unsigned ? ua < ub : a < b);
    case PG_OP_CMPNE:
      return int_lane(result_dt, a != b);
    case PG_OP_CMPEQ:
      return int_lane(result_dt, a == b);
    case PG_OP_AND:
      return int_lane(dt, ua & ub);
    case PG_OP_OR:
      return int_lane(dt, ua | ub);
    case PG_OP_XOR:
      return int_lane(dt, ua ^ ub);
    case PG_OP_SHL:
      return int_lane(dt, ua << (ub & 63));
    default:  // SHR: arithmetic for signed
      return int_lane(dt, is_unsigned ? ua >> (ub & 63) : static_cast<uint64_t>(a >> (ub & 63)));
  }
}

/// Everything one launch shares: buffers, scalars, the per-group local and per-thread
/// register arrays.
struct Launch {
  const Program& program;
  const std::vector<Memory>& buffers;
  const pg_launch_args& args;
  std::vector<std::vector<unsigned char>> arrays;  // by instruction index
  std::vector<Value> values;
};

[[noreturn]] void out_of_bounds(const Program& p, uint32_t i, const Pointer& ptr, uint32_t n) {
  fail(PG_ERR_LAUNCH, "template: '" + p.name + "' instruction " + std::to_string(i) + " (" +
                          polygrad::sdk::op_name(p.instructions[i].op) + ") accesses elements " +
                          std::to_string(ptr.index) + ".." + std::to_string(ptr.index + n - 1) +
                          " of " + std::to_string(ptr.count));
}

void run_thread(Launch& l, const uint32_t group[3], const uint32_t local[3]) {
  const Program& p = l.program;
  const uint32_t n = static_cast<uint32_t>(p.instructions.size());
  for (uint32_t i = 0; i < n; ++i) {
    const pg_instruction& in = p.instructions[i];
    const uint32_t* s = p.sources(in);
    Value& out = l.values[i];
    auto src = [&](uint32_t k) -> const Value& { return l.values[s[k]]; };
    auto src_dtype = [&](uint32_t k) { return p.instructions[s[k]].dtype; };
    const uint32_t lanes = in.vcount;
    switch (in.op) {
      case PG_OP_PARAM_BUFFER: {
        const Memory& m = l.buffers[in.arg.i];
        out.ptr = {m.data, static_cast<int64_t>(m.size / dtype_size(in.dtype)), 0};
        break;
      }
      case PG_OP_PARAM_SCALAR: {
        Lane raw;
        raw.i = l.args.scalars[in.arg.i];
        out.lane[0] =
            dtype_kind(in.dtype) == 'f' ? round_to(in.dtype, raw.f) : int_lane(in.dtype, raw.i);
        break;
      }
      case PG_OP_DEFINE_LOCAL:
      case PG_OP_DEFINE_REG:
        out.ptr = {l.arrays[i].data(), in.arg.i, 0};
        break;
      case PG_OP_SPECIAL: {
        uint32_t d = static_cast<uint32_t>(in.arg.i);
        int64_t v = in.arg2 == PG_SPECIAL_GROUP ? group[d]
                    : in.arg2 == PG_SPECIAL_LOCAL
                        ? local[d]
                        : int64_t{group[d]} * l.args.local_size[d] + local[d];
        out.lane[0].i = v;
        break;
      }
      case PG_OP_CONST:
        for (uint32_t k = 0; k < lanes; ++k)
          out.lane[k] = dtype_kind(in.dtype) == 'f' ? round_to(in.dtype, in.arg.f)
                                                    : int_lane(in.dtype, in.arg.i);
        break;
      case PG_OP_RANGE:
        out.lane[0].i = 0;
        if (src(0).lane[0].i <= 0) i = p.block_end[i];  // continue after END_RANGE
        break;
      case PG_OP_END_RANGE: {
        Value& counter = l.values[s[0]];
        if (++counter.lane[0].i < l.values[p.sources(p.instructions[s[0]])[0]].lane[0].i)
          i = s[0];  // back to the loop body
        break;
      }
      case PG_OP_IF:
        if (src(0).lane[0].i == 0) i = p.block_end[i];
        break;
      case PG_OP_END_IF:
      case PG_OP_BARRIER:  // one thread at a time: nothing to wait for
        break;
      case PG_OP_INDEX:
        out.ptr = src(0).ptr;
        out.ptr.index += src(1).lane[0].i;
        break;
      case PG_OP_LOAD:
      case PG_OP_STORE: {
        bool gated = in.src_count == 3 && src(2).lane[0].i == 0;
        if (in.op == PG_OP_LOAD && gated) {
          out.lane = src(1).lane;
          break;
        }
        if (gated) break;
        const Pointer& ptr = src(0).ptr;
        if (ptr.index < 0 || ptr.index + lanes > ptr.count) out_of_bounds(p, i, ptr, lanes);
        uint32_t dt = p.instructions[s[0]].dtype, width = dtype_size(dt);
        unsigned char* at = ptr.base + ptr.index * width;
        for (uint32_t k = 0; k < lanes; ++k) {
          if (in.op == PG_OP_LOAD)
            out.lane[k] = read(dt, at + k * width);
          else
            write(dt, src(1).lane[k], at + k * width);
        }
        break;
      }
      case PG_OP_WMMA: {  // kTensorCore: one thread, row-major fragments
        const pg_tensor_core& tc = kTensorCore;
        const Value &a = src(0), &b = src(1), &c = src(2);
        for (uint32_t r = 0; r < tc.m; ++r)
          for (uint32_t col = 0; col < tc.n; ++col) {
            double sum = c.lane[r * tc.n + col].f;
            for (uint32_t k = 0; k < tc.k; ++k)
              sum += a.lane[r * tc.k + k].f * b.lane[k * tc.n + col].f;
            out.lane[r * tc.n + col] = round_to(in.dtype, sum);
          }
        break;
      }
      case PG_OP_ATOMIC_ADD: {  // one thread runs at a time: a read, an add and a write
        const Pointer& ptr = src(0).ptr;
        if (ptr.index < 0 || ptr.index + 1 > ptr.count) out_of_bounds(p, i, ptr, 1);
        const uint32_t dt = in.dtype, width = dtype_size(dt);
        unsigned char* at = ptr.base + ptr.index * width;
        const Lane old = read(dt, at), add = src(1).lane[0];
        write(dt,
              dtype_kind(dt) == 'f'
                  ? round_to(dt, old.f + add.f)
                  : int_lane(dt, static_cast<uint64_t>(old.i) + static_cast<uint64_t>(add.i)),
              at);
        break;
      }
      case PG_OP_CAST:
      case PG_OP_BITCAST:
        for (uint32_t k = 0; k < lanes; ++k) {
          if (in.op == PG_OP_CAST) {
            out.lane[k] = convert(src_dtype(0), in.dtype, src(0).lane[k]);
          } else {
            unsigned char bytes[8] = {};
            write(src_dtype(0), src(0).lane[k], bytes);
            out.lane[k] = read(in.dtype, bytes);
          }
        }
        break;
      case PG_OP_VECTORIZE:
        for (uint32_t k = 0; k < lanes; ++k) out.lane[k] = src(k).lane[0];
        break;
      case PG_OP_GEP:
        out.lane[0] = src(0).lane[in.arg.i];
        break;
      case PG_OP_WHERE:
        for (uint32_t k = 0; k < lanes; ++k) {
          bool c = src(0).lane[p.instructions[s[0]].vcount > 1 ? k : 0].i != 0;
          out.lane[k] = c ? src(1).lane[k] : src(2).lane[k];
        }
        break;
      default: {  // unary, binary and ternary ALU ops
        uint32_t dt = src_dtype(0);
        for (uint32_t k = 0; k < lanes; ++k) {
          Lane a = src(0).lane[k], b{}, c{};
          if (in.src_count > 1) b = src(1).lane[k];
          if (in.src_count > 2) c = src(2).lane[k];
          out.lane[k] = dtype_kind(dt) == 'f' ? float_op(in.op, dt, a.f, b.f, c.f)
                                              : int_op(in.op, dt, in.dtype, a.i, b.i, c.i);
        }
      }
    }
  }
}

}  // namespace

void execute(const Program& p, const std::vector<Memory>& buffers, const pg_launch_args& args) {
  Launch l{p, buffers, args, {}, std::vector<Value>(p.instructions.size())};
  l.arrays.resize(p.instructions.size());
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const pg_instruction& in = p.instructions[i];
    if (in.op == PG_OP_DEFINE_LOCAL || in.op == PG_OP_DEFINE_REG)
      l.arrays[i].assign(in.arg.i * dtype_size(in.dtype), 0);
  }
  const uint32_t* g = args.global_size;
  const uint32_t* t = args.local_size;
  uint32_t group[3], local[3];
  for (group[2] = 0; group[2] < g[2]; ++group[2])
    for (group[1] = 0; group[1] < g[1]; ++group[1])
      for (group[0] = 0; group[0] < g[0]; ++group[0])
        for (local[2] = 0; local[2] < t[2]; ++local[2])
          for (local[1] = 0; local[1] < t[1]; ++local[1])
            for (local[0] = 0; local[0] < t[0]; ++local[0]) run_thread(l, group, local);
}

}  // namespace template_plugin
