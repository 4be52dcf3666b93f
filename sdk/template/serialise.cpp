// Renderer and loader halves of the template plugin: validation, and a flat binary artifact.
#include <cstring>

#include "program.hpp"

namespace template_plugin {

using polygrad::sdk::fail;

namespace {

constexpr char kMagic[8] = {'P', 'G', 'T', 'M', 'P', 'L', '0', '1'};

bool is_pointer(const pg_instruction& in) {
  return in.addrspace != PG_ADDR_NONE;
}

/// Which dtypes an ALU op accepts: 'f' floats only, 'i' ints only, 'l' bool and ints,
/// 'n' ints and floats, 'a' any.
char op_domain(uint32_t op) {
  switch (op) {
    case PG_OP_RECIP:
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_TRUNC:
    case PG_OP_FDIV:
      return 'f';
    case PG_OP_IDIV:
    case PG_OP_MOD:
    case PG_OP_SHL:
    case PG_OP_SHR:
      return 'i';
    case PG_OP_NOT:
    case PG_OP_AND:
    case PG_OP_OR:
    case PG_OP_XOR:
      return 'l';
    case PG_OP_NEG:
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_MAX:
    case PG_OP_MULACC:
    case PG_OP_CMPLT:
    case PG_OP_ATOMIC_ADD:
      return 'n';
    default:
      return 'a';
  }
}

bool in_domain(char domain, uint32_t dt) {
  char kind = polygrad::sdk::dtype_kind(dt);
  switch (domain) {
    case 'f':
      return kind == 'f';
    case 'i':
      return kind == 'i' || kind == 'u';
    case 'l':
      return kind != 'f';
    case 'n':
      return kind != 'b';
    default:
      return true;
  }
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
T take(const unsigned char*& p, const unsigned char* end) {
  T v;
  if (static_cast<size_t>(end - p) < sizeof v) fail(PG_ERR_COMPILE, "artifact is truncated");
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

}  // namespace

Program prepare(const pg_kernel_program& p) {
  using polygrad::sdk::dtype_name;
  using polygrad::sdk::op_name;
  Program prog;
  prog.name = p.name;
  prog.instructions.assign(p.instructions, p.instructions + p.instruction_count);
  prog.operands.assign(p.operands, p.operands + p.operand_count);
  prog.buffer_count = p.buffer_count;
  prog.scalar_count = p.scalar_count;
  prog.block_end.assign(p.instruction_count, 0);
  std::vector<uint32_t> open;  // RANGE and IF blocks not closed yet
  for (uint32_t i = 0; i < p.instruction_count; ++i) {
    const pg_instruction& in = prog.instructions[i];
    const uint32_t* src = prog.sources(in);
    auto where = [&] {
      return "'" + prog.name + "' instruction " + std::to_string(i) + " (" + op_name(in.op) + " " +
             dtype_name(in.dtype) + ")";
    };
    if (in.dtype == PG_DTYPE_FLOAT16 || in.dtype == PG_DTYPE_BFLOAT16)
      fail(PG_ERR_UNSUPPORTED, "template: " + where() + ": dtype not supported");
    if (in.vcount > kMaxLanes)
      fail(PG_ERR_UNSUPPORTED, "template: " + where() + ": more than 8 lanes");
    uint32_t operand_dtype = in.src_count > 0 ? prog.instructions[src[0]].dtype : in.dtype;
    if (in.op == PG_OP_WHERE) operand_dtype = in.dtype;
    if (!in_domain(op_domain(in.op), operand_dtype))
      fail(PG_ERR_UNSUPPORTED, "template: " + where() + ": op not defined for this dtype");
    switch (in.op) {
      case PG_OP_RANGE:
      case PG_OP_IF:
        open.push_back(i);
        break;
      case PG_OP_END_RANGE:
      case PG_OP_END_IF: {
        pg_op opener = in.op == PG_OP_END_RANGE ? PG_OP_RANGE : PG_OP_IF;
        if (open.empty() || open.back() != src[0] || prog.instructions[src[0]].op != opener)
          fail(PG_ERR_INVALID_ARGUMENT, where() + " does not close the innermost block");
        prog.block_end[src[0]] = i;
        open.pop_back();
        break;
      }
      case PG_OP_BARRIER:
        prog.has_barrier = true;
        break;
      case PG_OP_PARAM_BUFFER:
      case PG_OP_DEFINE_LOCAL:
      case PG_OP_DEFINE_REG:
        if (in.dtype == PG_DTYPE_VOID)
          fail(PG_ERR_INVALID_ARGUMENT, where() + ": a pointer to void");
        if (in.op != PG_OP_PARAM_BUFFER && (in.arg.i < 1 || in.arg.i > (int64_t{1} << 24)))
          fail(PG_ERR_UNSUPPORTED, "template: " + where() + ": array size out of range");
        break;
      case PG_OP_WMMA: {
        const pg_tensor_core& tc = kTensorCore;
        const auto& a = prog.instructions[src[0]];
        const auto& b = prog.instructions[src[1]];
        const auto& c = prog.instructions[src[2]];
        if (in.arg.i != 0)
          fail(PG_ERR_UNSUPPORTED, "template: " + where() + ": tensor core " +
                                       std::to_string(in.arg.i) + " is not declared (only 0)");
        if (a.dtype != tc.dtype_a || b.dtype != tc.dtype_b || c.dtype != tc.dtype_c ||
            in.dtype != tc.dtype_c || a.vcount != tc.m * tc.k || b.vcount != tc.k * tc.n ||
            c.vcount != tc.m * tc.n || in.vcount != tc.m * tc.n)
          fail(PG_ERR_INVALID_ARGUMENT,
               where() + ": fragments must be float32 x4 (A 2x2, B 2x2, C and D 2x2)");
        break;
      }
      case PG_OP_INDEX:
      case PG_OP_LOAD:
      case PG_OP_STORE:
      case PG_OP_ATOMIC_ADD:
        if (!is_pointer(prog.instructions[src[0]]))
          fail(PG_ERR_INVALID_ARGUMENT, where() + ": source 0 is not a pointer");
        break;
      case PG_OP_BITCAST:
        if (polygrad::sdk::dtype_size(in.dtype) != polygrad::sdk::dtype_size(operand_dtype))
          fail(PG_ERR_INVALID_ARGUMENT, where() + ": sizes differ");
        break;
      case PG_OP_GEP:
        if (in.arg.i < 0 || in.arg.i >= prog.instructions[src[0]].vcount)
          fail(PG_ERR_INVALID_ARGUMENT, where() + ": lane out of range");
        break;
      default:
        break;
    }
  }
  if (!open.empty()) fail(PG_ERR_INVALID_ARGUMENT, "'" + prog.name + "': unclosed block");
  return prog;
}

std::string serialise(const pg_kernel_program& p) {
  prepare(p);  // refuse here what the loader would refuse later
  std::string out(kMagic, sizeof kMagic);
  uint32_t name_size = static_cast<uint32_t>(std::strlen(p.name));
  for (uint32_t v : {uint32_t{PG_KERNEL_ISA_VERSION}, name_size, p.instruction_count,
                     p.operand_count, p.buffer_count, p.scalar_count})
    put(out, v);
  out.append(p.name, name_size);
  out.append(reinterpret_cast<const char*>(p.instructions),
             sizeof(pg_instruction) * p.instruction_count);
  out.append(reinterpret_cast<const char*>(p.operands), sizeof(uint32_t) * p.operand_count);
  return out;
}

Program deserialise(const void* data, uint64_t size, const char* entry) {
  auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  if (size < sizeof kMagic || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    fail(PG_ERR_COMPILE, "template: not a template-plugin artifact (bad magic)");
  p += sizeof kMagic;
  pg_kernel_program prog{};
  prog.struct_size = sizeof prog;
  prog.isa_version = take<uint32_t>(p, end);
  uint32_t name_size = take<uint32_t>(p, end);
  prog.instruction_count = take<uint32_t>(p, end);
  prog.operand_count = take<uint32_t>(p, end);
  prog.buffer_count = take<uint32_t>(p, end);
  prog.scalar_count = take<uint32_t>(p, end);
  uint64_t need = uint64_t{name_size} + sizeof(pg_instruction) * uint64_t{prog.instruction_count} +
                  sizeof(uint32_t) * uint64_t{prog.operand_count};
  if (need != static_cast<uint64_t>(end - p))
    fail(PG_ERR_COMPILE, "template: artifact size does not match its header");
  std::string name(reinterpret_cast<const char*>(p), name_size);
  p += name_size;
  std::vector<pg_instruction> instructions(prog.instruction_count);
  std::memcpy(instructions.data(), p, sizeof(pg_instruction) * instructions.size());
  p += sizeof(pg_instruction) * instructions.size();
  std::vector<uint32_t> operands(prog.operand_count);
  std::memcpy(operands.data(), p, sizeof(uint32_t) * operands.size());
  if (entry != nullptr && name != entry)
    fail(PG_ERR_COMPILE, "template: artifact holds '" + name + "', not '" + entry + "'");
  prog.name = name.c_str();
  prog.instructions = instructions.data();
  prog.operands = operands.data();
  try {
    polygrad::sdk::check_program(prog);
    return prepare(prog);
  } catch (const polygrad::sdk::Error& e) {
    fail(PG_ERR_COMPILE, std::string("template: invalid artifact: ") + e.what());
  }
}

}  // namespace template_plugin
