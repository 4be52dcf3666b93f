// A kernel program as text, one instruction a line, indented by block: what the `trace` option
// logs for every program the device loads.
#include <polygrad/plugin.hpp>

#include <cstdio>

#include "program.hpp"

namespace polygrad::gpu_emu {

std::string listing(const pg_kernel_program& p) {
  std::string out = "kernel " + std::string(p.name) + ": " + std::to_string(p.buffer_count) +
                    " buffers, " + std::to_string(p.scalar_count) + " scalars, local size (" +
                    std::to_string(p.local_size[0]) + "," + std::to_string(p.local_size[1]) + "," +
                    std::to_string(p.local_size[2]) + ")\n";
  static const char* const spaces[] = {"", "*global", "*local", "*reg"};
  int depth = 0;
  for (uint32_t i = 0; i < p.instruction_count; ++i) {
    const pg_instruction& in = p.instructions[i];
    if (in.op == PG_OP_END_RANGE || in.op == PG_OP_END_IF) --depth;
    std::string line(2 * static_cast<size_t>(depth < 0 ? 0 : depth) + 2, ' ');
    line += "%" + std::to_string(i) + " = " + sdk::op_name(in.op) + " " + sdk::dtype_name(in.dtype);
    if (in.vcount > 1) line += "x" + std::to_string(in.vcount);
    if (in.addrspace <= PG_ADDR_REG) line += spaces[in.addrspace];
    if (in.src_count > 0) {
      line += " (";
      for (uint32_t k = 0; k < in.src_count; ++k)
        line += (k ? ", %" : "%") + std::to_string(p.operands[in.src_start + k]);
      line += ")";
    }
    if (in.op == PG_OP_CONST && sdk::dtype_is_float(in.dtype)) {
      char text[32];
      std::snprintf(text, sizeof text, " %.9g", in.arg.f);
      line += text;
    } else if (in.arg.i != 0 || in.op == PG_OP_CONST || in.op == PG_OP_SPECIAL ||
               in.op == PG_OP_PARAM_BUFFER || in.op == PG_OP_PARAM_SCALAR) {
      line += " " + std::to_string(in.arg.i);
    }
    if (in.op == PG_OP_SPECIAL)
      line += in.arg2 == PG_SPECIAL_GROUP   ? " group"
              : in.arg2 == PG_SPECIAL_LOCAL ? " local"
                                            : " global";
    out += line + "\n";
    if (in.op == PG_OP_RANGE || in.op == PG_OP_IF) ++depth;
  }
  return out;
}

}  // namespace polygrad::gpu_emu
