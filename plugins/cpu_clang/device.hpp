// The cpu device: allocator, renderer and program loader roles for PG_DEFINE_PLUGIN.
#ifndef POLYGRAD_CPU_CLANG_DEVICE_HPP
#define POLYGRAD_CPU_CLANG_DEVICE_HPP

#include <tbb/task_arena.h>

#include <polygrad/program_info.hpp>

#include "cpu_clang.hpp"

namespace polygrad::cpu_clang {

/// Settings read from the host's options (key, then the plugin-wide value, then defaults).
struct DeviceSettings {
  int threads = 1;
  int opt_level = 2;
  bool cache = true;
  std::string cache_dir;
  static DeviceSettings from_host(const sdk::Host& host, int32_t device_index);
};

class CpuDevice {
 public:
  CpuDevice(const sdk::Host& host, int32_t index);
  ~CpuDevice();

  void properties(pg_device_properties& p);
  pg_buffer_t alloc(uint64_t nbytes);
  void free(pg_buffer_t buffer);
  void copy_in(pg_buffer_t dst, uint64_t offset, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t src, uint64_t offset, uint64_t n);
  void copy_device(pg_buffer_t dst, uint64_t dst_offset, pg_buffer_t src, uint64_t src_offset,
                   uint64_t n);
  void* host_pointer(pg_buffer_t buffer);
  pg_buffer_t wrap_host(void* host, uint64_t nbytes);

  std::string render(const pg_kernel_program& program);
  /// Load C source (hosts before ABI 1.3: parameter counts unknown, launches unchecked).
  pg_program_t load(const void* artifact, uint64_t size, const char* entry);
  /// Load C source or an object from CpuClangPlugin::compile, with the program's metadata.
  pg_program_t load(const void* artifact, uint64_t size, const pg_program_info& info);
  void unload(pg_program_t program);
  void launch(pg_program_t program, const pg_launch_args& args);
  void synchronize() {}
  double launch_timed(pg_program_t program, const pg_launch_args& args);

  const DeviceSettings& settings() const { return settings_; }

 private:
  std::vector<char> object_for(const std::string& source, const std::string& entry);
  /// Link `object` into the JIT as a program; `counts` (buffers, scalars) checks its launches.
  pg_program_t link(const std::vector<char>& object, const std::string& entry,
                    std::optional<std::pair<uint32_t, uint32_t>> counts);

  const sdk::Host& host_;
  DeviceSettings settings_;
  tbb::task_arena arena_;
  Jit jit_;
  std::unique_ptr<sdk::DiskCache> cache_;
};

}  // namespace polygrad::cpu_clang

#endif  // POLYGRAD_CPU_CLANG_DEVICE_HPP
