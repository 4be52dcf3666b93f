// How often each instruction occurs in a WebAssembly module, read with wabt's opcode counter
// (the library behind wasm-opcodecnt): the wasm tests check which instructions the renderer
// chose.
#ifndef POLYGRAD_TESTS_WASM_OPCODE_COUNTS_HPP
#define POLYGRAD_TESTS_WASM_OPCODE_COUNTS_HPP

#include <cstddef>
#include <map>
#include <string>

namespace polygrad::test {

/// Instruction name ("f32x4.add", "local.get") -> occurrences in `module`'s code; also
/// "NAME @L", the occurrences inside L loops (the launch grid's three included), and for loads
/// and stores "NAME offset=N" (N the memarg offset). Empty when the module does not parse.
std::map<std::string, size_t> opcode_counts(const std::string& module);

}  // namespace polygrad::test

#endif
