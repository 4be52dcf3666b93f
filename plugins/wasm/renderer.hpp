// The wasm renderer: a kernel program to a WebAssembly module, written directly (no compiler),
// so that a browser build can link it unchanged. It depends on the SDK headers only.
//
// The module imports one memory, env.memory, and exports one function named after the program:
//
//   (func $<name> (param i32 x buffers) (param i64 x scalars)
//                 (param $scratch i32) (param $n0 $n1 $n2 i32) (param $l0 $l1 $l2 i32))
//
// Buffers are byte offsets into the memory; a scalar is its launch value (int64, a float as a
// double's bits). One call runs the whole launch grid: dims d = 0..2 count 0 .. n_d - 1 (n_d =
// global_size[d] * local_size[d]), with SPECIAL GLOBAL the count, GROUP the count / l_d and
// LOCAL the count % l_d. `scratch` is the offset of pg_scratch_bytes bytes of memory that the
// DEFINE_REG and DEFINE_LOCAL arrays (and lane-changing BITCASTs) live in. Three exported
// immutable i32 globals describe the call: pg_buffers, pg_scalars, pg_scratch_bytes, and a
// fourth, pg_group_memory, is 1 when the program has a BARRIER or DEFINE_LOCAL (so a launch
// must not have groups of more than one thread).
#ifndef POLYGRAD_WASM_RENDERER_HPP
#define POLYGRAD_WASM_RENDERER_HPP

#include <polygrad/plugin.h>

#include <string>

namespace polygrad::wasm {

/// Names of the exported globals that describe the kernel function.
inline constexpr const char* kBuffersGlobal = "pg_buffers";
inline constexpr const char* kScalarsGlobal = "pg_scalars";
inline constexpr const char* kScratchGlobal = "pg_scratch_bytes";
inline constexpr const char* kGroupMemoryGlobal = "pg_group_memory";

/// The module's bytes. Throws sdk::Error: PG_ERR_INVALID_ARGUMENT for a malformed program,
/// PG_ERR_UNSUPPORTED naming the op and dtype it cannot render (EXP2/LOG2/SIN, which the host
/// decomposes for this device; float16 and bfloat16; ISA 2 ops).
std::string render_module(const pg_kernel_program& program);

/// Whether render_module takes `op` on `dtype` in `vcount` lanes.
bool op_supported(uint32_t op, uint32_t dtype, uint32_t vcount);

}  // namespace polygrad::wasm

#endif
