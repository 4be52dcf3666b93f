// The C API's device and plugin registry entry points (pg_device_*, pg_plugin_*), over
// polygrad::Registry::global(). Strings are returned through thread-local storage, one slot per
// entry point, valid until this thread calls the same entry point again.
#include "capi/support.hpp"

#include <polygrad/load_report.hpp>
#include <polygrad/registry.hpp>

#include <string>

namespace polygrad::capi {
namespace {

/// Keeps `text` in the thread-local slot of one entry point and writes its C string to *out.
void put_string(std::string& slot, std::string text, const char** out) {
  check_out(out, "out");
  slot = std::move(text);
  *out = slot.c_str();
}

std::string join_lines(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += item;
    text += '\n';
  }
  return text;
}

}  // namespace
}  // namespace polygrad::capi

using polygrad::Registry;
using namespace polygrad::capi;

extern "C" {

POLYGRAD_API pg_api_status pg_device_list(const char** out) {
  thread_local std::string slot;
  return guard("pg_device_list",
               [&] { put_string(slot, join_lines(Registry::global().device_names()), out); });
}

POLYGRAD_API pg_api_status pg_device_default(const char** out) {
  thread_local std::string slot;
  return guard("pg_device_default",
               [&] { put_string(slot, Registry::global().default_device_name(), out); });
}

POLYGRAD_API pg_api_status pg_device_canonical(const char* name, const char** out) {
  thread_local std::string slot;
  return guard("pg_device_canonical", [&] {
    if (!name) polygrad::user_error("argument 'name' is NULL");
    // ("" is the default device, as everywhere a device is named)
    Registry& r = Registry::global();
    put_string(slot, r.device(*name ? std::string(name) : r.default_device_name()).name(), out);
  });
}

POLYGRAD_API pg_api_status pg_device_flags(const char* name, uint32_t* out) {
  return guard("pg_device_flags", [&] {
    if (!name) polygrad::user_error("argument 'name' is NULL");
    check_out(out, "out");
    Registry& r = Registry::global();
    *out = r.device(*name ? std::string(name) : r.default_device_name()).properties().caps.flags;
  });
}

POLYGRAD_API pg_api_status pg_device_dtypes(const char* name, uint64_t* out) {
  return guard("pg_device_dtypes", [&] {
    if (!name) polygrad::user_error("argument 'name' is NULL");
    check_out(out, "out");
    Registry& r = Registry::global();
    *out = r.device(*name ? std::string(name) : r.default_device_name()).properties().caps.dtype_mask;
  });
}

POLYGRAD_API pg_api_status pg_plugin_load(const char* name_or_path, const char** out) {
  thread_local std::string slot;
  return guard("pg_plugin_load", [&] {
    if (!name_or_path) polygrad::user_error("argument 'name_or_path' is NULL");
    polygrad::LoadRecord record = Registry::global().load(name_or_path);
    if (!record.loaded())
      throw polygrad::Error(polygrad::ErrorKind::user,
                            "cannot load plugin '" + std::string(name_or_path) +
                                "': " + polygrad::format_record(record),
                            PG_ERR_UNSUPPORTED);
    put_string(slot, record.plugin_name, out);
  });
}

POLYGRAD_API pg_api_status pg_plugin_register_static(pg_plugin_entry_fn entry) {
  return guard("pg_plugin_register_static", [&] {
    if (!entry) polygrad::user_error("argument 'entry' is NULL");
    polygrad::register_static_plugin(entry);
  });
}

POLYGRAD_API pg_api_status pg_plugin_report(int json, const char** out) {
  thread_local std::string slot;
  return guard("pg_plugin_report", [&] {
    polygrad::LoadReport report = Registry::global().report();
    put_string(slot, json ? polygrad::report_to_json(report) : polygrad::format_report(report),
               out);
  });
}

}  // extern "C"
