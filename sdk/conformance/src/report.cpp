#include "report.hpp"

#include <polygrad/plugin.hpp>

#include <algorithm>
#include <cstdio>
#include <iomanip>

namespace polygrad::conformance::detail {

void Suite::pass(const std::string& check, const std::string& note) {
  checks_.push_back({check, Outcome::pass, note});
}
void Suite::fail(const std::string& check, const std::string& reason) {
  checks_.push_back({check, Outcome::fail, reason});
}
void Suite::skip(const std::string& check, const std::string& reason) {
  checks_.push_back({check, Outcome::skip, reason});
}
bool Suite::expect(bool ok, const std::string& check, const std::string& reason) {
  ok ? pass(check) : fail(check, reason);
  return ok;
}
int Suite::count(Outcome outcome) const {
  int n = 0;
  for (const Check& c : checks_) n += c.outcome == outcome;
  return n;
}

Suite& Report::suite(const std::string& name) {
  for (Suite& s : suites_)
    if (s.name() == name) return s;
  return suites_.emplace_back(name);
}

void Report::mark(pg_op op, pg_dtype dtype, Cell cell) {
  has_table_ = true;
  Cell& c = table_[op][dtype];
  if (c == Cell::fail || cell == Cell::none) return;
  if (cell != Cell::unsupported || c == Cell::none) c = cell;
}

void Report::add_table(const std::string& name, const std::string& legend,
                       std::vector<TableRow> rows) {
  tables_.push_back({name, legend, std::move(rows)});
}

void Report::set_plugin(const std::string& path, const std::string& description) {
  path_ = path;
  description_ = description;
}

int Report::failures() const {
  int n = 0;
  for (const Suite& s : suites_) n += s.count(Outcome::fail);
  return n;
}

int Report::exit_code() const {
  if (!load_failure_.empty()) return 2;
  return failures() > 0 ? 1 : 0;
}

namespace {

const char* cell_text(Cell c) {
  switch (c) {
    case Cell::ok:
      return "ok";
    case Cell::unsupported:
      return "unsupported";
    case Cell::fail:
      return "FAIL";
    default:
      return "-";
  }
}

const char* outcome_text(Outcome o) {
  return o == Outcome::pass ? "pass" : o == Outcome::fail ? "fail" : "skip";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

void Report::write_text(std::ostream& out, bool verbose) const {
  out << "polygrad-conformance " << path_ << "\n";
  if (!description_.empty()) out << "plugin: " << description_ << "\n";
  if (!load_failure_.empty()) out << "could not load the plugin: " << load_failure_ << "\n";
  int total = 0;
  for (const Suite& s : suites_) {
    out << "\n[" << s.name() << "] " << s.count(Outcome::pass) << " passed, "
        << s.count(Outcome::fail) << " failed, " << s.count(Outcome::skip) << " skipped\n";
    if (!s.note().empty()) out << "  " << s.note() << "\n";
    for (const Check& c : s.checks()) {
      ++total;
      if (c.outcome == Outcome::pass && !verbose) continue;
      out << "  " << (c.outcome == Outcome::fail ? "FAIL" : outcome_text(c.outcome)) << "  "
          << c.name;
      if (!c.reason.empty()) out << ": " << c.reason;
      out << "\n";
    }
  }
  if (has_table_) {
    out << "\nop x dtype support (ok, FAIL, unsupported = refused with PG_ERR_UNSUPPORTED, "
           "- = dtype not declared or op not meaningful)\n";
    out << std::left << std::setw(13) << "";
    for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) out << std::setw(12) << sdk::dtype_name(d);
    out << "\n";
    for (uint32_t op = 0; op < PG_OP_COUNT; ++op) {
      out << std::setw(13) << sdk::op_name(op);
      for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d)
        out << std::setw(12) << cell_text(table_[op][d]);
      out << "\n";
    }
    out << std::right;
  }
  for (const ExtraTable& t : tables_) {
    size_t width = 13;
    for (const TableRow& row : t.rows) width = std::max(width, row.name.size() + 2);
    out << "\n" << t.legend << "\n" << std::left << std::setw(static_cast<int>(width)) << "";
    for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) out << std::setw(12) << sdk::dtype_name(d);
    out << "\n";
    for (const TableRow& row : t.rows) {
      out << std::setw(static_cast<int>(width)) << row.name;
      for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d) out << std::setw(12) << cell_text(row.cells[d]);
      out << "\n";
    }
    out << std::right;
  }
  out << "\nresult: "
      << (exit_code() == 0   ? "PASS"
          : exit_code() == 1 ? "FAIL"
                             : "NOT LOADED")
      << " (" << total << " checks, " << failures() << " failed)\n";
}

void Report::write_json(std::ostream& out) const {
  out << "{\"plugin_path\":" << json_string(path_) << ",\"plugin\":" << json_string(description_)
      << ",\"load_error\":" << json_string(load_failure_) << ",\"suites\":[";
  bool first_suite = true;
  for (const Suite& s : suites_) {
    out << (first_suite ? "" : ",") << "{\"name\":" << json_string(s.name())
        << ",\"note\":" << json_string(s.note()) << ",\"passed\":" << s.count(Outcome::pass)
        << ",\"failed\":" << s.count(Outcome::fail) << ",\"skipped\":" << s.count(Outcome::skip)
        << ",\"checks\":[";
    first_suite = false;
    bool first = true;
    for (const Check& c : s.checks()) {
      out << (first ? "" : ",") << "{\"name\":" << json_string(c.name) << ",\"status\":\""
          << outcome_text(c.outcome) << "\",\"reason\":" << json_string(c.reason) << "}";
      first = false;
    }
    out << "]}";
  }
  out << "],\"table\":{";
  bool first_op = true;
  for (uint32_t op = 0; has_table_ && op < PG_OP_COUNT; ++op) {
    out << (first_op ? "" : ",") << json_string(sdk::op_name(op)) << ":{";
    first_op = false;
    for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d)
      out << (d == 1 ? "" : ",") << json_string(sdk::dtype_name(d)) << ":\""
          << cell_text(table_[op][d]) << "\"";
    out << "}";
  }
  out << "},\"tables\":{";
  for (size_t t = 0; t < tables_.size(); ++t) {
    out << (t ? "," : "") << json_string(tables_[t].name) << ":{";
    for (size_t r = 0; r < tables_[t].rows.size(); ++r) {
      const TableRow& row = tables_[t].rows[r];
      out << (r ? "," : "") << json_string(row.name) << ":{";
      for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d)
        out << (d == 1 ? "" : ",") << json_string(sdk::dtype_name(d)) << ":\""
            << cell_text(row.cells[d]) << "\"";
      out << "}";
    }
    out << "}";
  }
  out << "},\"failed\":" << failures() << ",\"exit_code\":" << exit_code() << "}\n";
}

}  // namespace polygrad::conformance::detail
