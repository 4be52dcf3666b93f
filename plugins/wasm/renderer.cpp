// Kernel program -> WebAssembly module (renderer.hpp): the module's sections around the one
// function that FunctionWriter (function_writer.hpp) writes.
#include "renderer.hpp"

#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include "function_writer.hpp"

namespace polygrad::wasm {
namespace {

using detail::FunctionWriter;
using detail::kExtraParams;

void export_global(ByteWriter& globals, ByteWriter& exports, uint32_t index, const char* name,
                   uint32_t value) {
  globals.u8(static_cast<uint8_t>(ValType::I32));
  globals.u8(0);  // immutable
  globals.u8(op::i32_const);
  globals.sleb(static_cast<int32_t>(value));
  globals.u8(op::end);
  exports.name(name);
  exports.u8(0x03);  // global
  exports.uleb(index);
}

}  // namespace

bool op_supported(uint32_t op, uint32_t dtype, uint32_t vcount) {
  if (op >= PG_OP_FIRST_ISA2 || op == PG_OP_EXP2 || op == PG_OP_LOG2 || op == PG_OP_SIN)
    return false;
  if (dtype == PG_DTYPE_FLOAT16 || dtype == PG_DTYPE_BFLOAT16) return false;
  return vcount >= 1 && vcount <= 16;
}

std::string render_module(const pg_kernel_program& program) {
  sdk::check_program(program);
  FunctionWriter fn(program);
  ByteWriter body = fn.body();

  ByteWriter out;
  out.raw("\0asm", 4);
  const uint8_t version[4] = {1, 0, 0, 0};
  out.raw(version, 4);

  ByteWriter types;  // one function type
  types.uleb(1);
  types.u8(0x60);
  types.uleb(program.buffer_count + program.scalar_count + kExtraParams);
  for (uint32_t k = 0; k < program.buffer_count; ++k) types.u8(uint8_t(ValType::I32));
  for (uint32_t k = 0; k < program.scalar_count; ++k) types.u8(uint8_t(ValType::I64));
  for (uint32_t k = 0; k < kExtraParams; ++k) types.u8(uint8_t(ValType::I32));
  types.uleb(0);  // no results
  out.section(SectionId::Type, types);

  ByteWriter imports;  // env.memory, at least 0 pages, no maximum
  imports.uleb(1);
  imports.name("env");
  imports.name("memory");
  imports.u8(0x02);
  imports.u8(0x00);
  imports.uleb(0);
  out.section(SectionId::Import, imports);

  ByteWriter functions;
  functions.uleb(1);
  functions.uleb(0);
  out.section(SectionId::Function, functions);

  ByteWriter globals, exports;
  globals.uleb(4);
  exports.uleb(5);
  exports.name(program.name ? program.name : "kernel");
  exports.u8(0x00);  // function
  exports.uleb(0);
  export_global(globals, exports, 0, kBuffersGlobal, program.buffer_count);
  export_global(globals, exports, 1, kScalarsGlobal, program.scalar_count);
  export_global(globals, exports, 2, kScratchGlobal, fn.scratch_bytes());
  export_global(globals, exports, 3, kGroupMemoryGlobal, fn.group_memory() ? 1 : 0);
  out.section(SectionId::Global, globals);
  out.section(SectionId::Export, exports);

  ByteWriter code;
  code.uleb(1);
  code.uleb(body.size());
  code.append(body);
  out.section(SectionId::Code, code);
  return out.take();
}

}  // namespace polygrad::wasm
