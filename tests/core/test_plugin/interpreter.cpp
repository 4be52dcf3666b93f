#include "interpreter.hpp"

#include <cstring>

namespace polygrad_test {

using polygrad::sdk::dtype_is_float;
using polygrad::sdk::dtype_size;
using polygrad::sdk::fail;
using polygrad::sdk::op_name;

namespace {

struct Value {
  double f = 0;
  int64_t i = 0;
  HostBuffer* buffer = nullptr;  // pointers: the buffer and an element offset in i
};

bool supported_op(uint32_t op) {
  switch (op) {
    case PG_OP_PARAM_BUFFER:
    case PG_OP_PARAM_SCALAR:
    case PG_OP_SPECIAL:
    case PG_OP_CONST:
    case PG_OP_RANGE:
    case PG_OP_END_RANGE:
    case PG_OP_IF:
    case PG_OP_END_IF:
    case PG_OP_INDEX:
    case PG_OP_LOAD:
    case PG_OP_STORE:
    case PG_OP_NEG:
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_MAX:
    case PG_OP_CMPLT:
    case PG_OP_WHERE:
    case PG_OP_MULACC:
    case PG_OP_CAST:
      return true;
    default:
      return false;
  }
}

bool supported_dtype(uint32_t dt) {
  return dt == PG_DTYPE_VOID || dt == PG_DTYPE_BOOL || dt == PG_DTYPE_INT32 ||
         dt == PG_DTYPE_INT64 || dt == PG_DTYPE_FLOAT32 || dt == PG_DTYPE_FLOAT64;
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <class T>
T take(const unsigned char*& p, const unsigned char* end) {
  if (static_cast<size_t>(end - p) < sizeof(T)) fail(PG_ERR_COMPILE, "artifact is truncated");
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

double round_to(uint32_t dt, double f) {
  return dt == PG_DTYPE_FLOAT32 ? static_cast<float>(f) : f;
}

Value load_value(const Value& ptr, uint32_t dt) {
  uint64_t size = dtype_size(dt);
  if (ptr.buffer == nullptr || ptr.i < 0 ||
      static_cast<uint64_t>(ptr.i + 1) * size > ptr.buffer->bytes.size())
    fail(PG_ERR_LAUNCH, "load out of bounds at element " + std::to_string(ptr.i));
  const unsigned char* at = ptr.buffer->bytes.data() + ptr.i * size;
  Value v;
  switch (dt) {
    case PG_DTYPE_FLOAT32: {
      float x;
      std::memcpy(&x, at, 4);
      v.f = x;
      break;
    }
    case PG_DTYPE_FLOAT64:
      std::memcpy(&v.f, at, 8);
      break;
    case PG_DTYPE_INT32: {
      int32_t x;
      std::memcpy(&x, at, 4);
      v.i = x;
      break;
    }
    case PG_DTYPE_INT64:
      std::memcpy(&v.i, at, 8);
      break;
    default:
      v.i = at[0] != 0;
      break;
  }
  return v;
}

void store_value(const Value& ptr, uint32_t dt, const Value& v) {
  uint64_t size = dtype_size(dt);
  if (ptr.buffer == nullptr || ptr.i < 0 ||
      static_cast<uint64_t>(ptr.i + 1) * size > ptr.buffer->bytes.size())
    fail(PG_ERR_LAUNCH, "store out of bounds at element " + std::to_string(ptr.i));
  unsigned char* at = ptr.buffer->bytes.data() + ptr.i * size;
  switch (dt) {
    case PG_DTYPE_FLOAT32: {
      float x = static_cast<float>(v.f);
      std::memcpy(at, &x, 4);
      break;
    }
    case PG_DTYPE_FLOAT64:
      std::memcpy(at, &v.f, 8);
      break;
    case PG_DTYPE_INT32: {
      int32_t x = static_cast<int32_t>(v.i);
      std::memcpy(at, &x, 4);
      break;
    }
    case PG_DTYPE_INT64:
      std::memcpy(at, &v.i, 8);
      break;
    default:
      at[0] = v.i != 0;
      break;
  }
}

}  // namespace

std::string serialise(const pg_kernel_program& p) {
  for (uint32_t i = 0; i < p.instruction_count; ++i) {
    const pg_instruction& in = p.instructions[i];
    if (!supported_op(in.op) || !supported_dtype(in.dtype) || in.vcount != 1)
      fail(PG_ERR_UNSUPPORTED, std::string("test_host cannot run ") + op_name(in.op) + " of " +
                                   polygrad::sdk::dtype_name(in.dtype) + " x" +
                                   std::to_string(in.vcount));
  }
  std::string out = "PGTI";
  put(out, static_cast<uint32_t>(std::strlen(p.name)));
  out += p.name;
  put(out, p.instruction_count);
  put(out, p.operand_count);
  put(out, p.buffer_count);
  put(out, p.scalar_count);
  out.append(reinterpret_cast<const char*>(p.instructions),
             p.instruction_count * sizeof(pg_instruction));
  out.append(reinterpret_cast<const char*>(p.operands), p.operand_count * sizeof(uint32_t));
  return out;
}

Interpreted deserialise(const void* data, uint64_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  if (size < 4 || std::memcmp(p, "PGTI", 4) != 0) fail(PG_ERR_COMPILE, "not a test_host artifact");
  p += 4;
  Interpreted prog;
  uint32_t name_size = take<uint32_t>(p, end);
  if (static_cast<uint64_t>(end - p) < name_size) fail(PG_ERR_COMPILE, "artifact is truncated");
  prog.name.assign(reinterpret_cast<const char*>(p), name_size);
  p += name_size;
  uint32_t count = take<uint32_t>(p, end), operands = take<uint32_t>(p, end);
  prog.buffer_count = take<uint32_t>(p, end);
  prog.scalar_count = take<uint32_t>(p, end);
  for (uint32_t i = 0; i < count; ++i) prog.instructions.push_back(take<pg_instruction>(p, end));
  for (uint32_t i = 0; i < operands; ++i) prog.operands.push_back(take<uint32_t>(p, end));
  pg_kernel_program view{};
  view.struct_size = sizeof(view);
  view.isa_version = PG_KERNEL_ISA_VERSION;
  view.name = prog.name.c_str();
  view.instructions = prog.instructions.data();
  view.instruction_count = count;
  view.operands = prog.operands.data();
  view.operand_count = operands;
  view.buffer_count = prog.buffer_count;
  view.scalar_count = prog.scalar_count;
  polygrad::sdk::check_program(view);
  prog.block_end.assign(count, 0);
  for (uint32_t i = 0; i < count; ++i)
    if (prog.instructions[i].op == PG_OP_END_RANGE || prog.instructions[i].op == PG_OP_END_IF)
      prog.block_end[prog.operands[prog.instructions[i].src_start]] = i;
  for (uint32_t i = 0; i < count; ++i)
    if ((prog.instructions[i].op == PG_OP_RANGE || prog.instructions[i].op == PG_OP_IF) &&
        prog.block_end[i] <= i)
      fail(PG_ERR_COMPILE, "instruction " + std::to_string(i) + " opens a block never closed");
  return prog;
}

void run(const Interpreted& prog, const pg_launch_args& args) {
  if (args.buffer_count < prog.buffer_count || args.scalar_count < prog.scalar_count)
    fail(PG_ERR_INVALID_ARGUMENT, "launch: " + prog.name + " needs " +
                                      std::to_string(prog.buffer_count) + " buffers and " +
                                      std::to_string(prog.scalar_count) + " scalars");
  std::vector<Value> v(prog.instructions.size());
  uint32_t g[3], l[3];
  for (g[2] = 0; g[2] < args.global_size[2]; ++g[2])
    for (g[1] = 0; g[1] < args.global_size[1]; ++g[1])
      for (g[0] = 0; g[0] < args.global_size[0]; ++g[0])
        for (l[2] = 0; l[2] < args.local_size[2]; ++l[2])
          for (l[1] = 0; l[1] < args.local_size[1]; ++l[1])
            for (l[0] = 0; l[0] < args.local_size[0]; ++l[0]) {
              for (size_t pc = 0; pc < prog.instructions.size(); ++pc) {
                const pg_instruction& in = prog.instructions[pc];
                const uint32_t* s = prog.operands.data() + in.src_start;
                const bool fl = dtype_is_float(in.dtype);
                const bool src_fl =
                    in.src_count > 0 && dtype_is_float(prog.instructions[s[0]].dtype);
                Value& out = v[pc];
                auto num = [&](uint32_t k) {
                  return src_fl ? v[s[k]].f : static_cast<double>(v[s[k]].i);
                };
                switch (in.op) {
                  case PG_OP_PARAM_BUFFER:
                    out.buffer = reinterpret_cast<HostBuffer*>(args.buffers[in.arg.i]);
                    out.i = 0;
                    break;
                  case PG_OP_PARAM_SCALAR:
                    if (fl)
                      std::memcpy(&out.f, &args.scalars[in.arg.i], 8);
                    else
                      out.i = args.scalars[in.arg.i];
                    break;
                  case PG_OP_SPECIAL: {
                    int d = static_cast<int>(in.arg.i);
                    out.i = in.arg2 == PG_SPECIAL_GROUP ? g[d]
                            : in.arg2 == PG_SPECIAL_LOCAL
                                ? l[d]
                                : int64_t(g[d]) * args.local_size[d] + l[d];
                    break;
                  }
                  case PG_OP_CONST:
                    out.f = in.arg.f;
                    out.i = in.arg.i;
                    break;
                  case PG_OP_RANGE:
                    out.i = 0;
                    if (v[s[0]].i <= 0) pc = prog.block_end[pc];
                    break;
                  case PG_OP_IF:
                    if (v[s[0]].i == 0) pc = prog.block_end[pc];
                    break;
                  case PG_OP_END_IF:
                    break;
                  case PG_OP_END_RANGE: {
                    Value& counter = v[s[0]];
                    const uint32_t* rs = prog.operands.data() + prog.instructions[s[0]].src_start;
                    if (++counter.i < v[rs[0]].i) pc = s[0];
                    break;
                  }
                  case PG_OP_INDEX:
                    out.buffer = v[s[0]].buffer;
                    out.i = v[s[0]].i + v[s[1]].i;
                    break;
                  case PG_OP_LOAD:
                    out = (in.src_count == 3 && v[s[2]].i == 0) ? v[s[1]]
                                                                : load_value(v[s[0]], in.dtype);
                    break;
                  case PG_OP_STORE:
                    if (in.src_count == 2 || v[s[2]].i != 0)
                      store_value(v[s[0]], prog.instructions[s[1]].dtype, v[s[1]]);
                    break;
                  case PG_OP_NEG:
                    out.f = -v[s[0]].f;
                    out.i = -v[s[0]].i;
                    break;
                  case PG_OP_ADD:
                    out.f = num(0) + num(1);
                    out.i = v[s[0]].i + v[s[1]].i;
                    break;
                  case PG_OP_SUB:
                    out.f = num(0) - num(1);
                    out.i = v[s[0]].i - v[s[1]].i;
                    break;
                  case PG_OP_MUL:
                    out.f = num(0) * num(1);
                    out.i = v[s[0]].i * v[s[1]].i;
                    break;
                  case PG_OP_MAX:
                    out.f = num(0) > num(1) ? num(0) : num(1);
                    out.i = v[s[0]].i > v[s[1]].i ? v[s[0]].i : v[s[1]].i;
                    break;
                  case PG_OP_CMPLT:
                    out.i = src_fl ? num(0) < num(1) : v[s[0]].i < v[s[1]].i;
                    break;
                  case PG_OP_WHERE:
                    out = v[s[0]].i ? v[s[1]] : v[s[2]];
                    break;
                  case PG_OP_MULACC:
                    out.f = num(0) * num(1) + num(2);
                    out.i = v[s[0]].i * v[s[1]].i + v[s[2]].i;
                    break;
                  case PG_OP_CAST:
                    if (fl)
                      out.f = src_fl ? v[s[0]].f : static_cast<double>(v[s[0]].i);
                    else
                      out.i = src_fl ? static_cast<int64_t>(v[s[0]].f) : v[s[0]].i;
                    break;
                  default:
                    fail(PG_ERR_UNSUPPORTED, std::string("cannot run ") + op_name(in.op));
                }
                if (fl) out.f = round_to(in.dtype, out.f);
                if (in.dtype == PG_DTYPE_INT32) out.i = static_cast<int32_t>(out.i);
              }
            }
}

}  // namespace polygrad_test
