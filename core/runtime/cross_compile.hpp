// Cross-compilation of every kernel the runtime compiles, for a second target that needs no
// device: POLYGRAD_CROSS_COMPILE=PLUGIN[:ARCH] (e.g. cuda:sm_90) lowers each kernel again for
// that plugin's compile target (SDK 1.3 compiler role), renders it, and compiles it when the
// plugin can; POLYGRAD_CROSS_COMPILE_DIR keeps the results. A test suite run on the CPU so
// checks that every kernel it produces also builds for a GPU the machine does not have.
#ifndef POLYGRAD_RUNTIME_CROSS_COMPILE_HPP
#define POLYGRAD_RUNTIME_CROSS_COMPILE_HPP

#include "ir/uop.hpp"

#include <polygrad/error.hpp>

#include <string>

namespace polygrad::runtime {

/// A kernel that did not cross-compile. Never a reason to fall back to another form of the
/// kernel: the run stops with it.
class CrossCompileError : public Error {
 public:
  using Error::Error;
};

/// When POLYGRAD_CROSS_COMPILE is set: lower `ast` (the kernel the runtime calls `kernel`) for
/// the named plugin's target, render it and, when the plugin compiles without a device,
/// compile it. With POLYGRAD_CROSS_COMPILE_DIR set, writes `<name>-<hash>.<ext>` there for the
/// rendered artifact and for the binary (docs/compiler.md lists the extensions). Each distinct
/// rendered kernel is compiled once per process. A kernel on a dtype the target does not
/// declare is skipped (the device would refuse it for that reason). Throws CrossCompileError naming the kernel,
/// the plugin and the architecture. Does nothing when the variable is unset or empty.
void cross_compile(const UOpRef& ast, const std::string& kernel);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_CROSS_COMPILE_HPP
