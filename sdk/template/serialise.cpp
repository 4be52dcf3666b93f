// Renderer and loader halves of the template plugin: validation, and a flat binary artifact.
#include <polygrad/program_serial.hpp>

#include "program.hpp"

namespace template_plugin {

using polygrad::sdk::fail;

namespace {

// The artifact's first 8 bytes; the digits change when its layout does.
constexpr const char* kMagic = "PGTMPL02";

bool is_pointer(const pg_instruction& in) {
  return in.addrspace != PG_ADDR_NONE;
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
    if (!polygrad::sdk::op_defined_on(in.op, operand_dtype))
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
  return polygrad::sdk::serialise_program(p, kMagic);
}

Program deserialise(const void* data, uint64_t size, const char* entry) {
  const polygrad::sdk::ProgramCopy copy =
      polygrad::sdk::deserialise_program(data, size, kMagic, "template");
  if (entry != nullptr && copy.name() != entry)
    fail(PG_ERR_COMPILE, "template: artifact holds '" + copy.name() + "', not '" + entry + "'");
  try {
    return prepare(copy.view());
  } catch (const polygrad::sdk::Error& e) {
    fail(PG_ERR_COMPILE, std::string("template: invalid artifact: ") + e.what());
  }
}

}  // namespace template_plugin
