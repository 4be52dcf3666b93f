// polygrad plugin SDK: the conformance kit.
//
// Loads a device plugin .so the way the host does (dlopen RTLD_NOW|RTLD_LOCAL, the one entry
// symbol) and checks it suite by suite: ABI negotiation, allocator and copies, every
// kernel-program op on every declared dtype against references computed by the kit itself,
// and error paths. Prints a summary per suite and an op x dtype support table.
//
// The kit links only the SDK headers and libdl, never libpolygrad. It survives a plugin that
// returns wrong statuses, wrong values or throws C++ exceptions across the boundary; it does not
// survive a plugin that crashes the process (run it under a separate process for that).
#ifndef POLYGRAD_CONFORMANCE_HPP
#define POLYGRAD_CONFORMANCE_HPP

#include <ostream>
#include <string>

namespace polygrad::conformance {

/// What to run and how to report it.
struct Options {
  std::string plugin_path;  ///< path of the plugin shared library
  bool json = false;        ///< write one JSON object instead of text
  bool abi_only = false;    ///< run only the ABI-negotiation suite
  bool verbose = false;     ///< list passing checks too, not only failures
};

/// Runs the kit on the plugin .so at options.plugin_path; writes the report to out.
/// Returns 0 when every check passed, 1 when any failed, 2 when the plugin could not load.
int run(const Options& options, std::ostream& out);

}  // namespace polygrad::conformance

#endif  // POLYGRAD_CONFORMANCE_HPP
