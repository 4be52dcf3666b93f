// A tiny scalar interpreter for kernel programs: the "renderer" of the core tests' plugin
// serialises a program, its "loader" reads it back, and launch runs it here. It covers the
// ops the tests and polygrad-demo use, on float32/float64/int32/int64/bool scalars.
#ifndef POLYGRAD_TESTS_CORE_INTERPRETER_HPP
#define POLYGRAD_TESTS_CORE_INTERPRETER_HPP

#include <polygrad/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad_test {

/// Host memory behind one buffer handle.
struct HostBuffer {
  std::vector<unsigned char> bytes;
};

/// A program read back from an artifact.
struct Interpreted {
  std::string name;
  std::vector<pg_instruction> instructions;
  std::vector<uint32_t> operands;
  uint32_t buffer_count = 0;
  uint32_t scalar_count = 0;
  std::vector<uint32_t> block_end;  // for each RANGE / IF: the index of its END_RANGE / END_IF
};

/// Serialise `p` (after checking every op and dtype is one the interpreter runs).
std::string serialise(const pg_kernel_program& p);
/// Read an artifact back; throws sdk::Error(PG_ERR_COMPILE) on malformed bytes.
Interpreted deserialise(const void* data, uint64_t size);
/// Run every launch index of `args`.
void run(const Interpreted& program, const pg_launch_args& args);

}  // namespace polygrad_test

#endif
