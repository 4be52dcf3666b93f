// polygrad plugin SDK: a kernel program as bytes and back (header-only), for plugins whose
// artifact is the program itself (an interpreter, an emulator) rather than code in another
// language. The template plugin and the gpu_emu plugin use it.
//
//   std::string bytes = polygrad::sdk::serialise_program(program, "MYPLUG01");     // renderer
//   polygrad::sdk::ProgramCopy copy =
//       polygrad::sdk::deserialise_program(bytes.data(), bytes.size(), "MYPLUG01", "my_plugin");
//   const pg_kernel_program& view = copy.view();                                   // loader
#ifndef POLYGRAD_PROGRAM_SERIAL_HPP
#define POLYGRAD_PROGRAM_SERIAL_HPP

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>
#include <polygrad/program_check.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::sdk {

/// A self-contained copy of a kernel program: its name, instructions and operands owned here.
class ProgramCopy {
 public:
  ProgramCopy() = default;
  explicit ProgramCopy(const pg_kernel_program& p)
      : ProgramCopy(
            p.name ? p.name : "",
            std::vector<pg_instruction>(p.instructions, p.instructions + p.instruction_count),
            std::vector<uint32_t>(p.operands, p.operands + p.operand_count), p) {}
  /// A program named `name` with these instructions and operands; the other fields (ISA,
  /// counts, local size) from `fields`.
  ProgramCopy(std::string name, std::vector<pg_instruction> instructions,
              std::vector<uint32_t> operands, const pg_kernel_program& fields)
      : name_(std::move(name)),
        instructions_(std::move(instructions)),
        operands_(std::move(operands)),
        program_(fields) {
    program_.struct_size = sizeof program_;
  }
  ProgramCopy(const ProgramCopy& other) { *this = other; }
  ProgramCopy& operator=(const ProgramCopy& other) {
    name_ = other.name_;
    instructions_ = other.instructions_;
    operands_ = other.operands_;
    program_ = other.program_;
    return *this;
  }

  /// The C view; valid while this object lives unchanged.
  const pg_kernel_program& view() const {
    program_.name = name_.c_str();
    program_.instructions = instructions_.data();
    program_.instruction_count = static_cast<uint32_t>(instructions_.size());
    program_.operands = operands_.data();
    program_.operand_count = static_cast<uint32_t>(operands_.size());
    return program_;
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<pg_instruction> instructions_;
  std::vector<uint32_t> operands_;
  mutable pg_kernel_program program_{};
};

namespace detail {
constexpr uint32_t kProgramMagicSize = 8;

template <class T>
void put_bytes(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
}  // namespace detail

/// The bytes of `p`: `magic` (8 characters, the plugin's own, with a version in it), the
/// program's counts, ISA and local size, its name, instructions and operands. Little-endian,
/// the layout of plugin.h; read back by deserialise_program with the same magic.
inline std::string serialise_program(const pg_kernel_program& p, const char* magic) {
  std::string out(magic, detail::kProgramMagicSize);
  const uint32_t name_size = static_cast<uint32_t>(std::strlen(p.name));
  for (uint32_t v : {p.isa_version, name_size, p.instruction_count, p.operand_count, p.buffer_count,
                     p.scalar_count, p.local_size[0], p.local_size[1], p.local_size[2]})
    detail::put_bytes(out, v);
  out.append(p.name, name_size);
  out.append(reinterpret_cast<const char*>(p.instructions),
             sizeof(pg_instruction) * p.instruction_count);
  out.append(reinterpret_cast<const char*>(p.operands), sizeof(uint32_t) * p.operand_count);
  return out;
}

/// Parses bytes written by serialise_program with `magic`. Throws Error(PG_ERR_COMPILE),
/// its message starting with `who`, when the bytes are not such a program (wrong magic,
/// truncated, sizes that do not add up) or the program fails check_program(p, plugin_isa).
inline ProgramCopy deserialise_program(const void* data, uint64_t size, const char* magic,
                                       const std::string& who,
                                       uint32_t plugin_isa = PG_KERNEL_ISA_VERSION) {
  auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  if (data == nullptr || size < detail::kProgramMagicSize ||
      std::memcmp(p, magic, detail::kProgramMagicSize) != 0)
    fail(PG_ERR_COMPILE, who + ": not a " + who + " artifact (bad magic)");
  p += detail::kProgramMagicSize;
  uint32_t header[9];
  if (static_cast<size_t>(end - p) < sizeof header)
    fail(PG_ERR_COMPILE, who + ": artifact is truncated");
  std::memcpy(header, p, sizeof header);
  p += sizeof header;
  pg_kernel_program fields{};
  fields.isa_version = header[0];
  const uint32_t name_size = header[1], instructions = header[2], operands = header[3];
  fields.buffer_count = header[4];
  fields.scalar_count = header[5];
  for (int d = 0; d < 3; ++d) fields.local_size[d] = header[6 + d];
  const uint64_t need = uint64_t{name_size} + sizeof(pg_instruction) * uint64_t{instructions} +
                        sizeof(uint32_t) * uint64_t{operands};
  if (need != static_cast<uint64_t>(end - p))
    fail(PG_ERR_COMPILE, who + ": artifact size does not match its header");
  std::string name(reinterpret_cast<const char*>(p), name_size);
  p += name_size;
  std::vector<pg_instruction> code(instructions);
  if (instructions > 0) std::memcpy(code.data(), p, sizeof(pg_instruction) * instructions);
  p += sizeof(pg_instruction) * instructions;
  std::vector<uint32_t> srcs(operands);
  if (operands > 0) std::memcpy(srcs.data(), p, sizeof(uint32_t) * operands);
  ProgramCopy copy(std::move(name), std::move(code), std::move(srcs), fields);
  try {
    check_program(copy.view(), plugin_isa);
  } catch (const Error& e) {
    fail(PG_ERR_COMPILE, who + ": invalid artifact: " + e.what());
  }
  return copy;
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_PROGRAM_SERIAL_HPP
