// Test harness: loads the gpu_emu plugin with dlopen, as the host does, and drives it through
// its C tables: buffers in and out, and programs built with sdk::ProgramBuilder rendered,
// loaded, launched and unloaded in one call.
#ifndef POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP
#define POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP

#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace polygrad::test {

/// What a call returned.
struct Outcome {
  pg_status status = PG_OK;
  std::string error;
  bool ok() const { return status == PG_OK; }
};

using Dims = std::array<uint32_t, 3>;
using Options = std::map<std::string, std::string>;

/// One initialised plugin with its device emu:0.
class Emulator {
 public:
  /// `options` answer get_option for every device; unset keys return NULL.
  explicit Emulator(Options options = {});
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  const pg_plugin& table() const { return *table_; }
  pg_plugin_state_t state() const { return state_; }
  pg_device_t device() const { return device_; }
  const pg_device_properties& properties() const { return properties_; }

  /// A buffer holding `values`; freed with the emulator.
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
  pg_buffer_t alloc(uint64_t nbytes);

  /// Render, load, launch `global` groups of `local` threads, synchronise and unload. The
  /// first failing step's status and message.
  Outcome run(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers, Dims global,
              Dims local = {1, 1, 1}, const std::vector<int64_t>& scalars = {});
  /// As run, failing the current test on any error.
  void run_ok(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers, Dims global,
              Dims local = {1, 1, 1}, const std::vector<int64_t>& scalars = {});
  /// Render only.
  Outcome render(sdk::ProgramBuilder& builder, std::string& artifact);

 private:
  void copy_in(pg_buffer_t b, const void* src, uint64_t n);
  void copy_out(void* dst, pg_buffer_t b, uint64_t n);
  static const char* option_thunk(void* ctx, int32_t device, const char* key);

  std::map<std::string, std::string> options_;
  pg_host_services services_{};
  const pg_plugin* table_ = nullptr;
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
  pg_device_properties properties_{};
  std::vector<pg_buffer_t> buffers_;
};

}  // namespace polygrad::test

#endif  // POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP
