// polygrad::CompileTarget: render and compile kernel programs for a plugin's target without
// opening a device (SDK 1.3 compiler role), e.g. CUDA code for sm_90 on a machine with no GPU.
//
//   polygrad::CompileTarget t = polygrad::Registry::global().compile_target("cpu_clang");
//   polygrad::Artifact source = t.render(program);          // the renderer's format
//   polygrad::Artifact binary = t.compile(source, program);  // the plugin's binary_format
//   device.load(binary, program);                            // later, where a device exists
#ifndef POLYGRAD_COMPILE_TARGET_HPP
#define POLYGRAD_COMPILE_TARGET_HPP

#include <polygrad/plugin.h>
#include <polygrad/device.hpp>
#include <polygrad/export.hpp>

#include <memory>
#include <string>

namespace polygrad {

/// One architecture of one plugin. Cheap to copy; keeps its plugin alive.
class POLYGRAD_API CompileTarget {
 public:
  /// The plugin serving it, e.g. "cpu_clang".
  const std::string& plugin_name() const;
  /// The architecture as the plugin names it ("sm_90", "x86_64-znver3").
  std::string arch() const { return target_.arch; }
  /// What codegen may assume about the target.
  const pg_capabilities& caps() const { return target_.caps; }
  /// The kernel ISA programs for this target are written in: min(host ISA, plugin ISA).
  uint32_t isa_version() const;
  /// Render `program` into the renderer's artifact format.
  Artifact render(const pg_kernel_program& program) const;
  /// Whether the plugin compiles artifacts into binaries without a device.
  bool can_compile() const;
  /// Compile `rendered` (from render(program)) into the plugin's binary format, which a
  /// device of the plugin loads with Device::load(artifact, program). A user Error when the
  /// plugin cannot (can_compile() is false).
  Artifact compile(const Artifact& rendered, const pg_kernel_program& program) const;

 private:
  friend class Registry;
  CompileTarget(std::shared_ptr<detail::LoadedPlugin> plugin, const pg_target& target);
  std::shared_ptr<detail::LoadedPlugin> plugin_;
  pg_target target_{};
};

}  // namespace polygrad

#endif  // POLYGRAD_COMPILE_TARGET_HPP
