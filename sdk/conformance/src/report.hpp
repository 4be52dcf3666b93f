// The conformance report: named checks grouped in suites, the op x dtype support table, and
// the text and JSON writers.
#ifndef POLYGRAD_CONFORMANCE_REPORT_HPP
#define POLYGRAD_CONFORMANCE_REPORT_HPP

#include <polygrad/plugin.h>
#include <polygrad/conformance.hpp>

#include <array>
#include <deque>
#include <ostream>
#include <string>
#include <vector>

namespace polygrad::conformance::detail {

using Outcome = Status;

/// One named check and, unless it passed, why.
struct Check {
  std::string name;
  Outcome outcome = Outcome::pass;
  std::string reason;
};

/// A list of checks: "abi", "allocator", "ops", "errors".
class Suite {
 public:
  explicit Suite(std::string name) : name_(std::move(name)) {}

  void pass(const std::string& check, const std::string& note = "");
  void fail(const std::string& check, const std::string& reason);
  void skip(const std::string& check, const std::string& reason);
  /// Records a pass when `ok`, else a failure with `reason`; returns `ok`.
  bool expect(bool ok, const std::string& check, const std::string& reason);

  /// A line printed under the suite's summary (what it compared against).
  void set_note(const std::string& note) { note_ = note; }

  const std::string& name() const { return name_; }
  const std::string& note() const { return note_; }
  const std::vector<Check>& checks() const { return checks_; }
  int count(Outcome outcome) const;

 private:
  std::string name_;
  std::string note_;
  std::vector<Check> checks_;
};

/// Everything the kit found out about one plugin.
class Report {
 public:
  Suite& suite(const std::string& name);

  /// Merge a result into the table: a failure wins, then ok, then unsupported.
  void mark(pg_op op, pg_dtype dtype, Cell cell);
  /// A case x dtype table printed after the op x dtype one, under `legend`.
  void add_table(const std::string& name, const std::string& legend, std::vector<TableRow> rows);

  /// Describes the plugin in the header ("template 0.1.0, ABI 1.0, ...").
  void set_plugin(const std::string& path, const std::string& description);
  /// The plugin could not be loaded at all: the run ends with exit code 2.
  void set_load_failure(const std::string& reason) { load_failure_ = reason; }

  int failures() const;
  int exit_code() const;
  void write_text(std::ostream& out, bool verbose) const;
  void write_json(std::ostream& out) const;

 private:
  std::string path_, description_, load_failure_;
  std::deque<Suite> suites_;
  std::array<std::array<Cell, PG_DTYPE_COUNT>, PG_OP_COUNT> table_{};
  bool has_table_ = false;
  struct ExtraTable {
    std::string name, legend;
    std::vector<TableRow> rows;
  };
  std::vector<ExtraTable> tables_;
};

}  // namespace polygrad::conformance::detail

#endif  // POLYGRAD_CONFORMANCE_REPORT_HPP
