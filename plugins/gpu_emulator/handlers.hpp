// The handlers decode picks for each instruction, specialised by op and dtype (alu.cpp,
// values.cpp, memory.cpp). Each returns nullptr for a combination the emulator does not run.
#ifndef POLYGRAD_GPU_EMU_HANDLERS_HPP
#define POLYGRAD_GPU_EMU_HANDLERS_HPP

#include <polygrad/plugin.h>

#include "program.hpp"

namespace polygrad::gpu_emu {

/// Unary, binary and ternary ALU ops (WHERE excluded) on operands of dtype `operand`.
Handler alu_handler(uint32_t op, pg_dtype operand);
/// CAST from `from` to `to`; BITCAST between two dtypes of one size.
Handler cast_handler(pg_dtype from, pg_dtype to);
Handler bitcast_handler(pg_dtype from, pg_dtype to);

/// CONST: Instr::imm holds the value's slot bits, splat over its lanes. Also the pointer
/// definitions, whose value is element 0.
Handler const_handler();
/// PARAM_SCALAR of `dtype`: Instr::imm is the slot.
Handler scalar_handler(pg_dtype dtype);
/// SPECIAL: Instr::imm is dim | kind << 8.
Handler special_handler();
/// INDEX: pointer (an element index) plus offset.
Handler index_handler();
/// Lane moves, the same for every dtype: GEP (Instr::imm the lane), VECTORIZE (sources in
/// Program::lists), WHERE.
Handler gep_handler();
Handler vectorize_handler();
Handler where_handler();

/// LOAD and STORE of `dtype` through a pointer into `space`, gated or not; ATOMIC_ADD.
Handler load_handler(pg_dtype dtype, pg_addrspace space, bool gated);
Handler store_handler(pg_dtype dtype, pg_addrspace space, bool gated);
Handler atomic_handler(pg_dtype dtype, pg_addrspace space);

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_HANDLERS_HPP
