// The emulated device as the SDK helper sees it: properties, an allocator whose memory the
// host reaches only through copies, the renderer and loader (a program's bytes, decoded once
// at load), and launches on the processor.
#ifndef POLYGRAD_GPU_EMU_DEVICE_HPP
#define POLYGRAD_GPU_EMU_DEVICE_HPP

#include <polygrad/plugin.hpp>

#include <string>

#include "processor.hpp"

namespace polygrad::gpu_emu {

/// Buffer alignment, as a GPU allocator's.
constexpr uint32_t kAlignment = 256;

/// The renderer's artifact: the kernel program's bytes (sdk::serialise_program) after decode
/// has accepted it. Throws what decode throws.
std::string render_program(const pg_kernel_program& program);

/// What the plugin's options set.
struct Settings {
  uint32_t threads = 1;
  bool check_alignment = true;
  bool trace = false;  ///< log every program loaded (as a listing) and every launch
};

class Device {
 public:
  Device(const sdk::Host& host, const Settings& settings)
      : host_(host),
        trace_(settings.trace),
        processor_(settings.threads, settings.check_alignment) {}

  void properties(pg_device_properties& p);

  pg_buffer_t alloc(uint64_t nbytes);
  void free(pg_buffer_t buffer);
  void copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n);
  void copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src, uint64_t src_offset,
                   uint64_t n);

  std::string render(const pg_kernel_program& program) { return render_program(program); }
  /// Decodes an artifact; PG_ERR_COMPILE for bytes that are not one, or a program it refuses.
  pg_program_t load(const void* artifact, uint64_t size, const char* entry);
  void unload(pg_program_t program);
  void launch(pg_program_t program, const pg_launch_args& args);
  void synchronize() {}  // launches run to the end before they return
  double launch_timed(pg_program_t program, const pg_launch_args& args);

 private:
  sdk::Host host_;
  bool trace_;
  Processor processor_;
};

}  // namespace polygrad::gpu_emu

#endif  // POLYGRAD_GPU_EMU_DEVICE_HPP
