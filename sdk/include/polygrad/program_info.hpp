// polygrad plugin SDK: the metadata of a kernel program (pg_program_info), derived from the
// program itself (header-only). The host hands it to load_program and compile; the
// conformance kit and plugin tests use it to do the same.
//
//   polygrad::sdk::ProgramInfo info(program, PG_ARTIFACT_C_SOURCE);
//   loader->load_program(device, bytes, size, &info.view(), &handle, &err);
#ifndef POLYGRAD_PROGRAM_INFO_HPP
#define POLYGRAD_PROGRAM_INFO_HPP

#include <polygrad/plugin.h>
#include <polygrad/program_check.hpp>

#include <string>
#include <vector>

namespace polygrad::sdk {

/// Owns a pg_program_info and the parameter array it points to.
class ProgramInfo {
 public:
  ProgramInfo() = default;
  /// The metadata of `program` (already valid: check_program): every buffer slot with its
  /// element dtype and whether the program loads, stores or atomically updates through it;
  /// every scalar slot with its dtype; the bytes of its DEFINE_LOCAL arrays; its local size.
  ProgramInfo(const pg_kernel_program& program, pg_artifact_format format) {
    entry_ = program.name ? program.name : "";
    const uint32_t nb = program.buffer_count, ns = program.scalar_count;
    params_.resize(static_cast<size_t>(nb) + ns);
    for (uint32_t b = 0; b < nb; ++b) params_[b] = {PG_PARAM_BUFFER, b, PG_DTYPE_VOID, 0};
    for (uint32_t k = 0; k < ns; ++k) params_[nb + k] = {PG_PARAM_SCALAR, k, PG_DTYPE_INT64, 0};
    // The buffer slot each instruction's pointer derives from (through INDEX), or -1.
    std::vector<int64_t> slot_of(program.instruction_count, -1);
    uint64_t local_bytes = 0;
    for (uint32_t i = 0; i < program.instruction_count; ++i) {
      const pg_instruction& in = program.instructions[i];
      // A malformed program (check_program refuses it) yields what can be read of it.
      const bool has_src = in.src_count > 0 &&
                           uint64_t{in.src_start} + in.src_count <= program.operand_count &&
                           program.operands[in.src_start] < i;
      const int64_t src0 = has_src ? slot_of[program.operands[in.src_start]] : -1;
      switch (in.op) {
        case PG_OP_PARAM_BUFFER:
          if (in.arg.i >= 0 && in.arg.i < nb) {
            slot_of[i] = in.arg.i;
            params_[static_cast<size_t>(in.arg.i)].dtype = in.dtype;
          }
          break;
        case PG_OP_PARAM_SCALAR:
          if (in.arg.i >= 0 && in.arg.i < ns)
            params_[nb + static_cast<size_t>(in.arg.i)].dtype = in.dtype;
          break;
        case PG_OP_DEFINE_LOCAL:
          local_bytes += static_cast<uint64_t>(in.arg.i) * dtype_size(in.dtype) * in.vcount;
          break;
        case PG_OP_INDEX:
          slot_of[i] = src0;
          break;
        case PG_OP_LOAD:
          mark(src0, PG_ACCESS_READ);
          break;
        case PG_OP_STORE:
          mark(src0, PG_ACCESS_WRITE);
          break;
        case PG_OP_ATOMIC_ADD:
          mark(src0, PG_ACCESS_ATOMIC);
          break;
        default:
          break;
      }
    }
    info_.struct_size = sizeof(pg_program_info);
    info_.isa_version = program.isa_version;
    info_.artifact_format = static_cast<uint32_t>(format);
    info_.static_local_bytes = local_bytes;
    for (int d = 0; d < 3; ++d) info_.required_local_size[d] = program.local_size[d];
  }

  ProgramInfo(const ProgramInfo& other)
      : entry_(other.entry_), params_(other.params_), info_(other.info_) {}
  ProgramInfo& operator=(const ProgramInfo& other) {
    entry_ = other.entry_;
    params_ = other.params_;
    info_ = other.info_;
    return *this;
  }

  /// The C view; valid while this object lives unchanged.
  const pg_program_info& view() const {
    info_.entry = entry_.c_str();
    info_.param_count = static_cast<uint32_t>(params_.size());
    info_.params = params_.empty() ? nullptr : params_.data();
    return info_;
  }
  void set_format(pg_artifact_format format) {
    info_.artifact_format = static_cast<uint32_t>(format);
  }
  void set_dynamic_local_bytes(uint64_t bytes) { info_.dynamic_local_bytes = bytes; }
  const std::string& entry() const { return entry_; }
  const std::vector<pg_param_info>& params() const { return params_; }

 private:
  void mark(int64_t slot, uint32_t access) {
    if (slot >= 0) params_[static_cast<size_t>(slot)].access |= access;
  }
  std::string entry_;
  std::vector<pg_param_info> params_;
  mutable pg_program_info info_{};
};

/// The buffer and scalar counts `info` declares (its parameters' highest slots + 1).
inline void count_params(const pg_program_info& info, uint32_t& buffers, uint32_t& scalars) {
  buffers = scalars = 0;
  for (uint32_t i = 0; i < info.param_count; ++i) {
    const pg_param_info& p = info.params[i];
    uint32_t& n = p.kind == PG_PARAM_BUFFER ? buffers : scalars;
    if (p.slot + 1 > n) n = p.slot + 1;
  }
}

}  // namespace polygrad::sdk

#endif  // POLYGRAD_PROGRAM_INFO_HPP
