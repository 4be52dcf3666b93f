// The structured record every plugin load attempt leaves behind (DESIGN rule 10).
#ifndef POLYGRAD_LOAD_REPORT_HPP
#define POLYGRAD_LOAD_REPORT_HPP

#include <polygrad/export.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace polygrad {

/// Where a plugin candidate was found, in discovery order.
enum class PluginSource {
  config,      ///< plugin_paths in the YAML config file
  api,         ///< Registry::add_plugin_path or Registry::load
  env,         ///< POLYGRAD_PLUGIN_PATH
  libdir,      ///< <dir of libpolygrad.so>/polygrad/plugins
  build_tree,  ///< the build tree's plugin directory (development builds)
  linked       ///< linked into the program (register_static_plugin), path "static:<name>"
};

/// The step a load attempt stopped at (refused) or `ready` (loaded).
enum class LoadStage {
  open,     ///< opening the shared library (dlopen)
  entry,    ///< resolving pg_plugin_entry
  table,    ///< calling the entry for the pg_plugin table
  abi,      ///< checking abi_major, abi_minor and struct_size
  slots,    ///< checking that the required table entries are set
  unique,   ///< checking no earlier plugin has the same name
  options,  ///< validating the config's options against the plugin's schema
  init,     ///< pg_plugin.init
  devices,  ///< pg_plugin.device_count
  ready     ///< loaded
};

enum class LoadStatus { loaded, refused };

/// What a plugin file serves.
enum class PluginKind {
  device,  ///< devices (plugin.h, pg_plugin_entry)
  ccl      ///< collective communication between processes (ccl.h, pg_ccl_entry)
};

/// One plugin candidate and what became of it.
struct LoadRecord {
  std::string path;  ///< absolute path of the .so
  PluginSource source = PluginSource::api;
  PluginKind kind = PluginKind::device;
  std::string plugin_name;     ///< from the table; empty if never read
  std::string plugin_version;  ///< likewise
  std::string device_prefix;   ///< likewise
  bool abi_known = false;      ///< abi_major/abi_minor were read
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  LoadStatus status = LoadStatus::refused;
  LoadStage stage = LoadStage::open;
  uint32_t device_count = 0;  ///< devices; for a ccl plugin 1 when it can make communicators
  /// Refused: exactly why. Loaded with zero devices (a ccl plugin: unusable in this process):
  /// the plugin's reason. Otherwise empty.
  std::string reason;

  bool loaded() const { return status == LoadStatus::loaded; }
};

/// Every load attempt of one registry, in the order they happened.
struct LoadReport {
  std::vector<LoadRecord> records;
  std::string config_path;   ///< the config file used, empty when none
  std::string config_error;  ///< the config error, empty when the config is valid
};

POLYGRAD_API const char* to_string(PluginSource source) noexcept;
POLYGRAD_API const char* to_string(LoadStage stage) noexcept;
POLYGRAD_API const char* to_string(LoadStatus status) noexcept;
POLYGRAD_API const char* to_string(PluginKind kind) noexcept;

/// One line, e.g. "refused  /x/polygrad_y.so (env) at abi: plugin ABI 2.0, host ABI 1.0"; a
/// ccl plugin's says "ccl" and "usable" (or "unusable: <reason>") in place of its devices.
POLYGRAD_API std::string format_record(const LoadRecord& record);
/// One line per record, each ending in a newline.
POLYGRAD_API std::string format_report(const LoadReport& report);
/// The report as a JSON object: {"config": ..., "config_error": ..., "records": [...]}, each
/// record an object of its fields (null for an empty name, version, prefix or unread ABI).
/// indent > 0 pretty-prints with that many spaces per level; 0 writes one line. Strings are
/// escaped per RFC 8259; bytes that are not UTF-8 are written as U+FFFD.
POLYGRAD_API std::string report_to_json(const LoadReport& report, int indent = 2);

}  // namespace polygrad

#endif  // POLYGRAD_LOAD_REPORT_HPP
