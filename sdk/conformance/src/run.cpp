// polygrad::conformance::run: load the plugin, run the suites, write the report.
#include <polygrad/conformance.hpp>
#include <polygrad/plugin.hpp>

#include <cstdlib>
#include <deque>
#include <exception>

#include "op_cases.hpp"
#include "report.hpp"
#include "session.hpp"
#include "suites.hpp"

namespace polygrad::conformance {

namespace {

std::string describe_plugin(const pg_plugin& p) {
  auto text = [](const char* s) { return s ? std::string(s) : std::string("?"); };
  return text(p.name) + " " + text(p.version) + " (ABI " + std::to_string(p.abi_major) + "." +
         std::to_string(p.abi_minor) + ", ISA " + std::to_string(p.isa_version) + ", devices '" +
         text(p.device_prefix) + "')";
}

std::string describe_device(const pg_device_properties& props) {
  std::string dtypes;
  for (uint32_t d = 1; d < PG_DTYPE_COUNT; ++d)
    if (props.caps.dtype_mask & (uint64_t{1} << d))
      dtypes += std::string(dtypes.empty() ? "" : " ") + sdk::dtype_name(d);
  std::string widths;
  for (uint32_t w : detail::vector_widths(props.caps))
    widths += std::string(widths.empty() ? "" : ",") + std::to_string(w);
  return std::string("; device 0: ") + props.name + ", target " + props.target + ", " +
         std::to_string(props.caps.max_vector_lanes) + " vector lanes (checked at " +
         (widths.empty() ? std::string("none") : widths) + "), dtypes: " + dtypes;
}

/// "" when `value` is a valid text for option `o`, else what is wrong with it.
std::string check_option_value(const pg_option_desc& o, const std::string& value) {
  if (o.type == PG_OPTION_BOOL)
    return value == "true" || value == "false" ? "" : "takes true or false";
  if (o.type != PG_OPTION_INT && o.type != PG_OPTION_FLOAT) return "";
  char* end = nullptr;
  const double v = o.type == PG_OPTION_INT
                       ? static_cast<double>(std::strtoll(value.c_str(), &end, 10))
                       : std::strtod(value.c_str(), &end);
  if (value.empty() || end == nullptr || *end != '\0')
    return o.type == PG_OPTION_INT ? "takes an integer" : "takes a number";
  if (o.min_value <= o.max_value && (v < o.min_value || v > o.max_value))
    return "takes a value from " + std::to_string(o.min_value) + " to " +
           std::to_string(o.max_value);
  return "";
}

/// The options as the kit's get_option answers them, checked against the plugin's schema;
/// nullptr with `why` set when one is unknown or malformed. Kept until the process ends.
const detail::OptionValues* plugin_options(const pg_plugin& p, const Options& options,
                                           std::string& why) {
  static std::deque<detail::OptionValues> kept;
  detail::OptionValues values;
  for (const auto& [key, value] : options.plugin_options) {
    const pg_option_desc* desc = nullptr;
    std::string declared;
    for (uint32_t k = 0; p.options != nullptr && k < p.option_count; ++k) {
      if (p.options[k].key == nullptr) continue;
      declared += std::string(declared.empty() ? "" : ", ") + p.options[k].key;
      if (key == p.options[k].key) desc = &p.options[k];
    }
    if (desc == nullptr) {
      why = "--option " + key + "=" + value + ": the plugin declares no option '" + key +
            "' (it declares: " + (declared.empty() ? "none" : declared) + ")";
      return nullptr;
    }
    std::string wrong = check_option_value(*desc, value);
    if (!wrong.empty()) {
      why = "--option " + key + "=" + value + ": '" + key + "' " + wrong;
      return nullptr;
    }
    values[key] = value;
  }
  return &kept.emplace_back(std::move(values));
}

/// Runs `extra` and adds its checks, note and table to the report.
void run_extra_suite(const ExtraSuite& extra, const std::string& path, detail::Report& report) {
  detail::Suite& suite = report.suite(extra.name);
  SuiteResult result = extra.run(path);
  suite.set_note(result.note);
  for (const CheckResult& c : result.checks) {
    if (c.status == Status::pass)
      suite.pass(c.name, c.reason);
    else if (c.status == Status::fail)
      suite.fail(c.name, c.reason);
    else
      suite.skip(c.name, c.reason);
  }
  if (!result.table.empty())
    report.add_table(extra.name, result.table_legend, std::move(result.table));
}

}  // namespace

bool parse_option(const std::string& text, std::pair<std::string, std::string>& out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

int run(const Options& options, std::ostream& out) {
  detail::Report report;
  report.set_plugin(options.plugin_path, "");
  try {
    detail::Session session;
    std::string why;
    if (detail::is_ccl_library(options.plugin_path)) {
      detail::run_ccl_suites(options.plugin_path, options.abi_only, report);
    } else if (!session.open_library(options.plugin_path, why)) {
      report.set_load_failure(why);
    } else if (const detail::OptionValues* values = plugin_options(session.plugin(), options, why);
               values == nullptr) {
      report.set_plugin(options.plugin_path, describe_plugin(session.plugin()));
      report.set_load_failure(why);
    } else {
      session.set_options(values);
      report.set_plugin(options.plugin_path, describe_plugin(session.plugin()));
      detail::AbiVerdict verdict = detail::run_abi_suite(session, report, why);
      if (verdict == detail::AbiVerdict::fatal) report.set_load_failure(why);
      if (verdict == detail::AbiVerdict::proceed) {
        report.set_plugin(options.plugin_path, describe_plugin(session.plugin()) +
                                                   describe_device(session.properties()));
        if (!options.abi_only) {
          detail::run_allocator_suite(session, report.suite("allocator"));
          detail::run_op_suite(session, report);
          detail::run_error_suite(session, report.suite("errors"));
          if (session.has_async()) detail::run_async_suite(session, report.suite("async"));
          if (const pg_loader_api* l = session.loader();
              PG_HAS_FIELD(l, pg_loader_api, flags) && (l->flags & PG_LOADER_CONCURRENT_LOAD))
            detail::run_concurrent_load_suite(session, report.suite("concurrent_load"));
          if (session.plugin().isa_version >= 2 &&
              (session.properties().caps.flags & PG_CAP_ATOMIC_ADD))
            detail::run_atomic_suite(session, report.suite("atomic"));
          if (session.plugin().isa_version >= 2 && session.properties().caps.tensor_core_count > 0)
            detail::run_wmma_suite(session, report.suite("wmma"));
          for (const ExtraSuite& extra : options.extra_suites)
            run_extra_suite(extra, options.plugin_path, report);
        }
      }
    }
  } catch (const std::exception& e) {
    report.suite("kit").fail("internal", std::string("the kit itself failed: ") + e.what());
  } catch (...) {
    report.suite("kit").fail("internal", "an unknown exception escaped");
  }
  if (options.json)
    report.write_json(out);
  else
    report.write_text(out, options.verbose);
  return report.exit_code();
}

}  // namespace polygrad::conformance
