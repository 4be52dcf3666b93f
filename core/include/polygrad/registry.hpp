// The plugin registry: discovers plugin .so files, loads them through the versioned C ABI,
// records every attempt, and resolves device names.
//
//   polygrad::Device cpu = polygrad::Registry::global().device("cpu");
//
// Discovery runs on first use, in this order: (0) plugins linked into the program and
// registered with register_static_plugin, in registration order; (1) plugin_paths from the config
// file, then paths given through the API; (2) POLYGRAD_PLUGIN_PATH (colon-separated directories or
// .so files); (3) <directory of libpolygrad.so>/polygrad/plugins; (4) the build tree's plugin
// directory. A directory contributes its files named polygrad_*.so. When two candidates carry
// the same plugin name the first wins and the later one is recorded as shadowed.
// Every method is thread-safe.
#ifndef POLYGRAD_REGISTRY_HPP
#define POLYGRAD_REGISTRY_HPP

#include <polygrad/ccl.hpp>
#include <polygrad/compile_target.hpp>
#include <polygrad/config.hpp>
#include <polygrad/device.hpp>
#include <polygrad/error.hpp>
#include <polygrad/export.hpp>
#include <polygrad/load_report.hpp>

#include <memory>
#include <string>
#include <vector>

namespace polygrad {

/// Where a Registry looks. The defaults are those of the process-wide registry.
struct RegistryOptions {
  std::vector<std::string> plugin_paths;  ///< directories or .so files, searched after config
  bool use_env = true;                    ///< read POLYGRAD_PLUGIN_PATH
  bool use_libdir = true;                 ///< search <dir of libpolygrad.so>/polygrad/plugins
  bool use_build_tree = true;             ///< search the build tree's plugin directory
  bool search_config = true;  ///< find a config file (POLYGRAD_CONFIG, ./polygrad.yaml, ...)
  std::string config_path;    ///< use this config file instead of searching
};

/// One option a plugin declares.
struct PluginOptionInfo {
  std::string key;
  pg_option_type type = PG_OPTION_STRING;
  std::string default_value;
  std::string help;
  double min_value = 0;
  double max_value = -1;  ///< min > max: unbounded
};

/// A loaded plugin.
struct PluginInfo {
  std::string name;
  std::string version;
  std::string path;
  std::string device_prefix;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  uint32_t isa_version = 0;
  bool has_compiler = false;  ///< compiles with no device (pg_compiler_api, SDK 1.3)
  bool has_async = false;     ///< streams and events (pg_async_api, SDK 1.3)
  uint32_t device_count = 0;
  std::string no_device_reason;  ///< the plugin's reason when device_count is 0
  std::vector<PluginOptionInfo> options;
};

/// Register a plugin linked into the program (built with PG_PLUGIN_STATIC_NAME, whose entry is
/// pg_plugin_entry_<name>): every registry considers it first at discovery, and a registry
/// that has already discovered (the process-wide one included) loads it at once. The entry
/// is called, and the table checked, exactly as for a plugin found in a file; its record's
/// path is "static:<name>". Registering the same entry twice is a no-op.
POLYGRAD_API void register_static_plugin(pg_plugin_entry_fn entry);

class POLYGRAD_API Registry {
 public:
  /// A registry that discovers with the process-wide defaults.
  Registry();
  explicit Registry(RegistryOptions options);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// The process-wide registry. It lives until the process ends and never unloads a plugin.
  static Registry& global();

  /// Add a directory or .so file to search (source "api"). Before discovery it joins the
  /// search list; after, it is loaded at once.
  void add_plugin_path(const std::string& path);

  /// Load a plugin by name ("cpu_clang": searched in the discovery directories) or by path
  /// (contains '/' or ends in ".so"). Returns the record of the attempt; a plugin that is
  /// already loaded returns its existing record. A path to a polygrad_ccl_*.so loads a ccl
  /// plugin (its record's kind is ccl). Throws a user Error when no candidate with
  /// that name exists.
  LoadRecord load(const std::string& name_or_path);

  /// Run discovery now (it otherwise runs on first use). Idempotent. Throws the config error,
  /// if any, on this and every later call that needs the config.
  void discover();

  /// Every load attempt so far (runs discovery first and opens the ccl plugins found; never
  /// throws for config errors).
  LoadReport report();
  /// The loaded plugins, in load order.
  std::vector<PluginInfo> plugins();
  /// Canonical names of every usable device, e.g. {"cpu:0"}.
  std::vector<std::string> device_names();
  /// Resolve "cpu", "cpu:0", "cuda:1". Throws a user Error listing the available devices.
  Device device(const std::string& name);
  /// Architecture `arch` ("" = the plugin's default) of plugin `plugin` (its name or device
  /// prefix), for rendering and compiling without a device; the plugin may have zero devices.
  /// Throws a user Error when the plugin is not loaded, has no compiler role (SDK 1.3), or
  /// does not compile for `arch`.
  CompileTarget compile_target(const std::string& plugin, const std::string& arch = "");
  /// POLYGRAD_DEVICE, else the config's default_device, else "cpu".
  std::string default_device_name();
  Device default_device();
  /// The config in use (after discovery).
  Config config();
  /// Join a group as rank bootstrap.rank of bootstrap.world_size through the ccl plugin named
  /// `plugin` ("mpi": the file polygrad_ccl_mpi.so in the discovery directories). ccl plugins
  /// are opened on first need (this call or report()). Throws a user Error naming the loaded
  /// ccl plugins when none has that name, or the plugin's reason when it cannot make a
  /// communicator in this process.
  Communicator communicator(const std::string& plugin, const Bootstrap& bootstrap);

  /// Path of the candidate whose plugin name (or file name polygrad_<name>.so) is `name`,
  /// loaded or refused; "" when there is none.
  std::string find_plugin(const std::string& name);

 private:
  friend void register_static_plugin(pg_plugin_entry_fn entry);
  void add_linked(pg_plugin_entry_fn entry);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace polygrad

#endif  // POLYGRAD_REGISTRY_HPP
