// polygrad::conformance::run: load the plugin, run the suites, write the report.
#include <polygrad/conformance.hpp>
#include <polygrad/plugin.hpp>

#include <exception>

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
  return std::string("; device 0: ") + props.name + ", target " + props.target + ", " +
         std::to_string(props.caps.max_vector_lanes) + " vector lanes, dtypes: " + dtypes;
}

}  // namespace

int run(const Options& options, std::ostream& out) {
  detail::Report report;
  report.set_plugin(options.plugin_path, "");
  try {
    detail::Session session;
    std::string why;
    if (!session.open_library(options.plugin_path, why)) {
      report.set_load_failure(why);
    } else {
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
