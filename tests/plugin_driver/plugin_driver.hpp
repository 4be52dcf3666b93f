// A test driver for a plugin: loads it with dlopen, as the host does, and drives it through its
// C tables (buffers in and out; programs built with sdk::ProgramBuilder rendered, loaded with
// their metadata, launched). The cpu_clang and gpu_emu suites share it.
#ifndef POLYGRAD_TESTS_PLUGIN_DRIVER_HPP
#define POLYGRAD_TESTS_PLUGIN_DRIVER_HPP

#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::test {

using Options = std::map<std::string, std::string>;

/// One initialised plugin instance with its device 0, with host services of the test's own
/// (options from a map, log lines recorded).
class PluginDriver {
 public:
  /// `options` answer get_option for every device; unset keys return NULL.
  /// The plugin at `path` (dlopen'ed once per path, never closed, as the host does), loading
  /// programs in `format`.
  PluginDriver(std::string path, pg_artifact_format format, Options options = {});
  ~PluginDriver();
  PluginDriver(const PluginDriver&) = delete;
  PluginDriver& operator=(const PluginDriver&) = delete;

  const pg_plugin& table() const { return *table_; }
  pg_plugin_state_t state() const { return state_; }
  pg_device_t device() const { return device_; }
  const pg_device_properties& properties() const { return properties_; }
  /// Log lines received so far, (level, message).
  const std::vector<std::pair<pg_log_level, std::string>>& logs() const { return logs_; }
  bool logged(pg_log_level level, const std::string& needle) const;

  pg_buffer_t alloc(uint64_t nbytes);
  void free(pg_buffer_t b);
  template <class T>
  pg_buffer_t upload(const std::vector<T>& values) {
    pg_buffer_t b = alloc(values.size() * sizeof(T));
    copy_in(b, values.data(), values.size() * sizeof(T));
    return b;
  }
  template <class T>
  std::vector<T> download(pg_buffer_t b, size_t count) {
    std::vector<T> out(count);
    copy_out(out.data(), b, count * sizeof(T));
    return out;
  }
  void copy_in(pg_buffer_t b, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t b, uint64_t n);

  /// Render a program to its artifact; status and error message through the out-parameters.
  pg_status render(sdk::ProgramBuilder& builder, std::string& source, std::string& error);
  /// Load an artifact through the 1.2 entry (no program metadata); returns the status, the program
  /// in `out`, the message in `error`.
  pg_status load_source(const std::string& source, const std::string& entry, pg_program_t& out,
                        std::string& error);
  /// Render and load with the program's metadata, as the host loads it (ABI 1.3): the first
  /// failing step's status, its message in `error`.
  pg_status load(sdk::ProgramBuilder& builder, pg_program_t& out, std::string& error);
  /// Render and load, throwing on any error (with the artifact when the load fails).
  pg_program_t build(sdk::ProgramBuilder& builder);
  void unload(pg_program_t p);
  /// Launch and synchronize; returns the status, message in `error`.
  pg_status launch(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
                   const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global,
                   std::array<uint32_t, 3> local, std::string& error);
  /// Launch with local size 1, failing the current test on any error.
  void run(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
           const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global);
  /// build + run + unload (unload also when the launch fails), for a kernel launched once.
  void run_once(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global);

 private:
  static void log_thunk(void* ctx, pg_log_level level, const char* message);
  static const char* option_thunk(void* ctx, int32_t device, const char* key);

  std::string path_;
  std::string artifact_;  ///< the last one rendered by load()
  pg_artifact_format format_;
  std::map<std::string, std::string> options_;
  std::vector<std::pair<pg_log_level, std::string>> logs_;
  pg_host_services services_{};
  const pg_plugin* table_ = nullptr;
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
  pg_device_properties properties_{};
  std::vector<pg_buffer_t> buffers_;  ///< still allocated; freed before shutdown
};

}  // namespace polygrad::test

#endif  // POLYGRAD_TESTS_PLUGIN_DRIVER_HPP
