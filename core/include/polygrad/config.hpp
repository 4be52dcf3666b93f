// The YAML configuration: default device, extra plugin paths and per-device options.
//
//   default_device: cpu
//   plugin_paths: [/opt/myaccel/lib]
//   devices:
//     cpu: {threads: 8, opt_level: 3}   # every cpu device
//     "cpu:1": {threads: 2}             # index-specific entries override the prefix-wide one
//
// Found by POLYGRAD_CONFIG, then ./polygrad.yaml, then $XDG_CONFIG_HOME/polygrad/config.yaml
// (~/.config/polygrad/config.yaml when XDG_CONFIG_HOME is unset). Every error message has the
// form "<file>:<line>: <key>: <what is wrong>". See docs/config.md.
#ifndef POLYGRAD_CONFIG_HPP
#define POLYGRAD_CONFIG_HPP

#include <polygrad/plugin.h>
#include <polygrad/export.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace polygrad {

/// One option under a device entry, as written.
struct ConfigOption {
  std::string key;     ///< e.g. "threads"
  std::string value;   ///< the scalar's text
  int line = 0;        ///< 1-based line of the key
  bool scalar = true;  ///< false when a map, list or null was given
};

/// One entry under `devices:`.
struct DeviceConfig {
  std::string name;    ///< as written: "cpu" or "cpu:1"
  std::string prefix;  ///< "cpu"
  int index = -1;      ///< -1 for a prefix-wide entry
  int line = 0;        ///< 1-based line of the name
  std::vector<ConfigOption> options;
};

/// Validated option values of one plugin: (device index or -1, key) -> normalised text.
using PluginOptions = std::map<std::pair<int, std::string>, std::string>;

/// A parsed config file. Parsing checks keys and types; the device entries are checked against
/// the loaded plugins' option schemas by options_for() and check_devices_known().
class POLYGRAD_API Config {
 public:
  /// The empty config: no file, every default.
  Config() = default;

  /// Parse a file. Throws a user Error "<file>:<line>: <key>: <what>" on any problem.
  static Config parse_file(const std::string& path);
  /// Parse `text` as if read from `file_name` (which names the file in messages and anchors
  /// relative plugin_paths).
  static Config parse_string(const std::string& text, const std::string& file_name);
  /// The file the search order finds, or "" when there is none. Throws when POLYGRAD_CONFIG
  /// names a file that does not exist.
  static std::string find_file();
  /// parse_file(find_file()), or the empty config when no file is found.
  static Config load_default();

  /// The file this config came from; "" for the empty config.
  const std::string& path() const { return path_; }
  /// default_device as written, if given.
  const std::optional<std::string>& default_device() const { return default_device_; }
  /// plugin_paths, relative entries resolved against the config file's directory.
  const std::vector<std::string>& plugin_paths() const { return plugin_paths_; }
  const std::vector<DeviceConfig>& devices() const { return devices_; }

  /// Validate every device entry for `prefix` against a plugin's option schema and return the
  /// normalised values. Throws a user Error on an unknown key, a wrong type or a value out of
  /// the declared range.
  PluginOptions options_for(const std::string& prefix, const pg_option_desc* schema,
                            uint32_t schema_count) const;
  /// Throws a user Error when a device entry or default_device names a prefix not in
  /// `served` (the prefixes of the loaded plugins).
  void check_devices_known(const std::vector<std::string>& served) const;

  /// "<file>:<line>: <key>: <what>".
  std::string message(int line, const std::string& key, const std::string& what) const;

 private:
  std::string path_;
  std::optional<std::string> default_device_;
  int default_device_line_ = 0;
  std::vector<std::string> plugin_paths_;
  std::vector<DeviceConfig> devices_;
};

/// Split "cpu:1" into ("cpu", 1) and "cpu" into ("cpu", -1); nullopt when `name` is not a
/// device name (prefix of [a-z0-9_], optionally ':' and a decimal index).
POLYGRAD_API std::optional<std::pair<std::string, int>> parse_device_name(const std::string& name);

}  // namespace polygrad

#endif  // POLYGRAD_CONFIG_HPP
