// Test harness of the gpu_emu suite: the plugin through the shared driver (tests/plugin_driver),
// with programs rendered, loaded, launched and unloaded in one call that reports the failing step.
#ifndef POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP
#define POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP

#include "../plugin_driver/plugin_driver.hpp"

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
/// The gpu_emu plugin with its device emu:0, its programs loaded as serialised bytes.
class Emulator : public PluginDriver {
 public:
  /// `options` answer get_option for every device; unset keys return NULL.
  explicit Emulator(Options options = {})
      : PluginDriver(POLYGRAD_GPU_EMU_PATH, PG_ARTIFACT_OTHER, std::move(options)) {}

  /// Render, load, launch `global` groups of `local` threads, synchronise and unload. The
  /// first failing step's status and message.
  Outcome run(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers, Dims global,
              Dims local = {1, 1, 1}, const std::vector<int64_t>& scalars = {});
  /// As run, failing the current test on any error.
  void run_ok(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers, Dims global,
              Dims local = {1, 1, 1}, const std::vector<int64_t>& scalars = {});
  /// Render only.
  Outcome render(sdk::ProgramBuilder& builder, std::string& artifact);
};

}  // namespace polygrad::test

#endif  // POLYGRAD_TESTS_GPU_EMU_HARNESS_HPP
