// polygrad plugin SDK: what a plugin checks before it trusts what the host hands it, and the
// op and dtype metadata those checks use (header-only; part of plugin.hpp).
#ifndef POLYGRAD_PROGRAM_CHECK_HPP
#define POLYGRAD_PROGRAM_CHECK_HPP

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>

#include <cstdint>
#include <string>

namespace polygrad::sdk {

// ---------------------------------------------------------------------------------------------
// Op and dtype metadata, generated from the X-macros.

inline const char* op_name(uint32_t op) {
  static constexpr const char* names[] = {
#define PG_X(name, nsrc, doc) #name,
      PG_KERNEL_OPS(PG_X)
#undef PG_X
  };
  return op < PG_OP_COUNT ? names[op] : "<bad op>";
}

/// Exact source count of an op, or -1 where it varies.
inline int op_source_count(uint32_t op) {
  static constexpr int counts[] = {
#define PG_X(name, nsrc, doc) nsrc,
      PG_KERNEL_OPS(PG_X)
#undef PG_X
  };
  return op < PG_OP_COUNT ? counts[op] : -2;
}

/// The kernel ISA that introduced `op` (1 or 2); 0 for a value that is no op.
inline uint32_t op_isa(uint32_t op) {
  if (op >= PG_OP_COUNT) return 0;
  return op >= PG_OP_FIRST_ISA2 ? 2 : 1;
}

inline const char* dtype_name(uint32_t dt) {
  static constexpr const char* names[] = {
#define PG_X(name, str, size, kind) str,
      PG_DTYPES(PG_X)
#undef PG_X
  };
  return dt < PG_DTYPE_COUNT ? names[dt] : "<bad dtype>";
}

inline uint32_t dtype_size(uint32_t dt) {
  static constexpr uint32_t sizes[] = {
#define PG_X(name, str, size, kind) size,
      PG_DTYPES(PG_X)
#undef PG_X
  };
  return dt < PG_DTYPE_COUNT ? sizes[dt] : 0;
}

/// 'v' void, 'b' bool, 'i' signed int, 'u' unsigned int, 'f' float.
inline char dtype_kind(uint32_t dt) {
  static constexpr char kinds[] = {
#define PG_X(name, str, size, kind) kind,
      PG_DTYPES(PG_X)
#undef PG_X
  };
  return dt < PG_DTYPE_COUNT ? kinds[dt] : '?';
}

inline bool dtype_is_float(uint32_t dt) {
  return dtype_kind(dt) == 'f';
}
inline bool dtype_is_int(uint32_t dt) {
  return dtype_kind(dt) == 'i' || dtype_kind(dt) == 'u';
}

/// Whether ALU or memory op `op` is defined on operands of dtype `dt` (for comparisons the
/// compared dtype, for WHERE the branches', for ATOMIC_ADD the added one): RECIP, SQRT, EXP2,
/// LOG2, SIN, TRUNC and FDIV on floats; IDIV, MOD, SHL and SHR on ints; NOT, AND, OR and XOR
/// on bool and ints; NEG, ADD, SUB, MUL, MAX, MULACC and ATOMIC_ADD on ints and floats; every
/// other op on every dtype (CMPLT on bool: false < true, as the host emits for torch's lt).
inline bool op_defined_on(uint32_t op, uint32_t dt) {
  const char kind = dtype_kind(dt);
  switch (op) {
    case PG_OP_RECIP:
    case PG_OP_SQRT:
    case PG_OP_EXP2:
    case PG_OP_LOG2:
    case PG_OP_SIN:
    case PG_OP_TRUNC:
    case PG_OP_FDIV:
      return kind == 'f';
    case PG_OP_IDIV:
    case PG_OP_MOD:
    case PG_OP_SHL:
    case PG_OP_SHR:
      return kind == 'i' || kind == 'u';
    case PG_OP_NOT:
    case PG_OP_AND:
    case PG_OP_OR:
    case PG_OP_XOR:
      return kind == 'b' || kind == 'i' || kind == 'u';
    case PG_OP_NEG:
    case PG_OP_ADD:
    case PG_OP_SUB:
    case PG_OP_MUL:
    case PG_OP_MAX:
    case PG_OP_MULACC:
    case PG_OP_ATOMIC_ADD:
      return kind == 'i' || kind == 'u' || kind == 'f';
    default:
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Kernel-program validation: every renderer should call it before reading a program.

/// Throws Error(PG_ERR_INVALID_ARGUMENT) naming the instruction when `p` is malformed:
/// unknown op or dtype, an op newer than the program's ISA, wrong source count, a source that
/// is not earlier, operand ranges out of bounds, parameter slots out of range, a STORE whose
/// vcount is not its value's, a gated LOAD whose alt differs from it, a gate that is not one
/// bool; and Error(PG_ERR_VERSION) when the program's ISA is above `plugin_isa` (the ISA the
/// plugin renders) or 0. A program at or below the plugin's ISA is accepted.
inline void check_program(const pg_kernel_program& p, uint32_t plugin_isa = PG_KERNEL_ISA_VERSION) {
  auto bad = [&](uint32_t i, const std::string& what) {
    fail(PG_ERR_INVALID_ARGUMENT, "kernel program '" + std::string(p.name ? p.name : "?") +
                                      "': instruction " + std::to_string(i) + ": " + what);
  };
  if (p.isa_version == 0 || p.isa_version > plugin_isa)
    fail(PG_ERR_VERSION, "kernel program ISA version " + std::to_string(p.isa_version) +
                             " but this plugin renders versions 1 to " +
                             std::to_string(plugin_isa));
  if (p.name == nullptr || p.name[0] == '\0')
    fail(PG_ERR_INVALID_ARGUMENT, "kernel program has no name");
  for (const char* c = p.name; *c; ++c) {
    bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
              (c != p.name && *c >= '0' && *c <= '9');
    if (!ok)
      fail(PG_ERR_INVALID_ARGUMENT,
           "kernel program name '" + std::string(p.name) + "' is not a C identifier");
  }
  if (p.instruction_count > 0 && p.instructions == nullptr)
    fail(PG_ERR_INVALID_ARGUMENT, "kernel program has no instruction array");
  if (p.operand_count > 0 && p.operands == nullptr)
    fail(PG_ERR_INVALID_ARGUMENT, "kernel program has no operand array");
  for (uint32_t i = 0; i < p.instruction_count; ++i) {
    const pg_instruction& in = p.instructions[i];
    if (in.op >= PG_OP_COUNT) bad(i, "unknown op " + std::to_string(in.op));
    if (op_isa(in.op) > p.isa_version)
      bad(i, std::string(op_name(in.op)) + " is an ISA " + std::to_string(op_isa(in.op)) +
                 " op in an ISA " + std::to_string(p.isa_version) + " program");
    if (in.dtype >= PG_DTYPE_COUNT) bad(i, "unknown dtype " + std::to_string(in.dtype));
    if (in.vcount == 0) bad(i, std::string(op_name(in.op)) + " has vcount 0");
    if (in.addrspace > PG_ADDR_REG) bad(i, "unknown address space");
    int want = op_source_count(in.op);
    if (want >= 0 && in.src_count != static_cast<uint32_t>(want))
      bad(i, std::string(op_name(in.op)) + " takes " + std::to_string(want) + " sources, got " +
                 std::to_string(in.src_count));
    if (in.op == PG_OP_LOAD && in.src_count != 1 && in.src_count != 3)
      bad(i, "LOAD takes 1 or 3 sources");
    if (in.op == PG_OP_STORE && in.src_count != 2 && in.src_count != 3)
      bad(i, "STORE takes 2 or 3 sources");
    if (in.op == PG_OP_VECTORIZE && in.src_count != in.vcount)
      bad(i, "VECTORIZE needs vcount sources");
    if (static_cast<uint64_t>(in.src_start) + in.src_count > p.operand_count)
      bad(i, "operand range out of bounds");
    for (uint32_t s = 0; s < in.src_count; ++s) {
      uint32_t j = p.operands[in.src_start + s];
      if (j >= i) bad(i, "source " + std::to_string(s) + " is not an earlier instruction");
      // A void instruction (STORE, BARRIER, END_*) has no value; an IF is only END_IF's source.
      const pg_instruction& src = p.instructions[j];
      if ((src.dtype == PG_DTYPE_VOID || src.op == PG_OP_ATOMIC_ADD) &&
          !(in.op == PG_OP_END_IF && src.op == PG_OP_IF))
        bad(i, "source " + std::to_string(s) + " (" + op_name(src.op) + ") has no value");
    }
    // Lanes of an access: a STORE writes all of its value's lanes (its vcount is the value's);
    // a gated LOAD's alt has the LOAD's dtype and vcount; a gate is one bool for all lanes.
    if (in.op == PG_OP_STORE && p.instructions[p.operands[in.src_start + 1]].vcount != in.vcount)
      bad(i, "STORE has vcount " + std::to_string(in.vcount) + " but its value has " +
                 std::to_string(p.instructions[p.operands[in.src_start + 1]].vcount) + " lanes");
    if (in.op == PG_OP_LOAD && in.src_count == 3) {
      const pg_instruction& alt = p.instructions[p.operands[in.src_start + 1]];
      if (alt.vcount != in.vcount || alt.dtype != in.dtype)
        bad(i, "a gated LOAD's alt must have the LOAD's dtype and vcount");
    }
    if ((in.op == PG_OP_LOAD || in.op == PG_OP_STORE) && in.src_count == 3) {
      const pg_instruction& gate = p.instructions[p.operands[in.src_start + 2]];
      if (gate.dtype != PG_DTYPE_BOOL || gate.vcount != 1)
        bad(i, std::string("the gate of a ") + op_name(in.op) + " must be one bool (vcount 1)");
    }
    if (in.op == PG_OP_ATOMIC_ADD &&
        (in.vcount != 1 || p.instructions[p.operands[in.src_start + 1]].dtype != in.dtype ||
         p.instructions[p.operands[in.src_start + 1]].vcount != 1))
      bad(i, "ATOMIC_ADD adds one lane of its dtype");
    if (in.op == PG_OP_PARAM_BUFFER && (in.arg.i < 0 || in.arg.i >= p.buffer_count))
      bad(i, "buffer slot out of range");
    if (in.op == PG_OP_PARAM_SCALAR && (in.arg.i < 0 || in.arg.i >= p.scalar_count))
      bad(i, "scalar slot out of range");
    if (in.op == PG_OP_SPECIAL && (in.arg.i < 0 || in.arg.i > 2 || in.arg2 < 0 || in.arg2 > 2))
      bad(i, "SPECIAL dim or kind out of range");
  }
}

/// The sources of instruction `i` of program `p` (after check_program).
inline const uint32_t* sources(const pg_kernel_program& p, const pg_instruction& in) {
  return p.operands + in.src_start;
}

// ---------------------------------------------------------------------------------------------
// Launch-argument validation.

/// Throws Error(PG_ERR_INVALID_ARGUMENT) when launch arguments are NULL, too small for this
/// SDK, or lack the buffer or scalar array they count.
inline void check_launch(const pg_launch_args* a) {
  if (a == nullptr) fail(PG_ERR_INVALID_ARGUMENT, "launch: args are NULL");
  if (a->struct_size < sizeof(pg_launch_args))
    fail(PG_ERR_INVALID_ARGUMENT, "launch: args struct_size too small");
  if (a->buffer_count > 0 && a->buffers == nullptr)
    fail(PG_ERR_INVALID_ARGUMENT, "launch: buffers are NULL");
  if (a->scalar_count > 0 && a->scalars == nullptr)
    fail(PG_ERR_INVALID_ARGUMENT, "launch: scalars are NULL");
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_PROGRAM_CHECK_HPP
