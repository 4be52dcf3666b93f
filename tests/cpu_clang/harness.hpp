// Test harness: loads the cpu_clang plugin with dlopen and drives it through its C tables with
// host services of our own (options from a map, log lines recorded).
#ifndef POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP
#define POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP

#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::test {

/// A fresh private directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  /// Regular files directly inside the directory.
  std::vector<std::string> files() const;

 private:
  std::string path_;
};

using Options = std::map<std::string, std::string>;

/// One initialised plugin instance with its device 0.
class Plugin {
 public:
  /// `options` answer get_option for every device; unset keys return NULL.
  explicit Plugin(std::map<std::string, std::string> options = {});
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const pg_plugin& table() const { return *table_; }
  pg_device_t device() const { return device_; }
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

  /// Render a program to source; status and error message through the out-parameters.
  pg_status render(sdk::ProgramBuilder& builder, std::string& source, std::string& error);
  /// Load C source; returns the status, the program in `out`, the message in `error`.
  pg_status load_source(const std::string& source, const std::string& entry, pg_program_t& out,
                        std::string& error);
  /// Render and load, failing the current test on any error.
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

  std::map<std::string, std::string> options_;
  std::vector<std::pair<pg_log_level, std::string>> logs_;
  pg_host_services services_{};
  const pg_plugin* table_ = nullptr;
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
  std::vector<pg_buffer_t> buffers_;  ///< still allocated; freed before shutdown
};

/// A double scalar argument as the launch ABI wants it (the bit pattern in an int64).
inline int64_t f64_bits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

}  // namespace polygrad::test

#endif  // POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP
