// polygrad plugin SDK: the conformance kit.
//
// Loads a device plugin .so the way the host does (dlopen RTLD_NOW|RTLD_LOCAL, the one entry
// symbol) and checks it suite by suite: ABI negotiation, allocator and copies, every
// kernel-program op on every declared dtype and vector width against references computed by
// the kit itself, and error paths. Prints a summary per suite and an op x dtype support table.
// A caller may add suites of its own (ExtraSuite): `polygrad conformance` adds the programs
// the host's codegen makes for the plugin.
//
// The kit links only the SDK headers and libdl, never libpolygrad. It survives a plugin that
// returns wrong statuses, wrong values or throws C++ exceptions across the boundary; it does not
// survive a plugin that crashes the process (run it under a separate process for that).
#ifndef POLYGRAD_CONFORMANCE_HPP
#define POLYGRAD_CONFORMANCE_HPP

#include <polygrad/plugin.h>

#include <array>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::conformance {

/// Outcome of one check.
enum class Status { pass, fail, skip };

/// One named check and, unless it passed, why.
struct CheckResult {
  std::string name;
  Status status = Status::pass;
  std::string reason;
};

/// A cell of a case x dtype table: not run (-), ok, unsupported, FAIL.
enum class Cell { none, ok, unsupported, fail };

/// One row of a case x dtype table, indexed by pg_dtype.
struct TableRow {
  std::string name;
  std::array<Cell, PG_DTYPE_COUNT> cells{};
};

/// What a suite added by the caller found: its checks, a line printed above them, and a case
/// x dtype table (empty for none) printed after the kit's op x dtype table.
struct SuiteResult {
  std::vector<CheckResult> checks;
  std::string note;
  std::string table_legend;
  std::vector<TableRow> table;
};

/// A suite the caller adds to the kit's own (the host's corpus in `polygrad conformance`). It
/// runs after them, when the plugin has a device and not with abi_only; `run` gets the plugin
/// path. Its checks count towards the result and its table joins the report.
struct ExtraSuite {
  std::string name;
  std::function<SuiteResult(const std::string& plugin_path)> run;
};

/// What to run and how to report it.
struct Options {
  std::string plugin_path;  ///< path of the plugin shared library
  bool json = false;        ///< write one JSON object instead of text
  bool abi_only = false;    ///< run only the ABI-negotiation suite
  bool verbose = false;     ///< list passing checks too, not only failures
  /// Plugin options (key, value), answered by the kit's get_option for every device; checked
  /// against the plugin's option schema first (an unknown key or a bad value: exit code 2).
  std::vector<std::pair<std::string, std::string>> plugin_options;
  std::vector<ExtraSuite> extra_suites;  ///< run after the kit's suites
};

/// Parses "key=value" (an --option argument) into `out`; false when there is no '=' or no key.
bool parse_option(const std::string& text, std::pair<std::string, std::string>& out);

/// Runs the kit on the plugin .so at options.plugin_path; writes the report to out.
/// Returns 0 when every check passed, 1 when any failed, 2 when the plugin could not load.
int run(const Options& options, std::ostream& out);

}  // namespace polygrad::conformance

#endif  // POLYGRAD_CONFORMANCE_HPP
