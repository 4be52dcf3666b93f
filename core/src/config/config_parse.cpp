// Reading the YAML config: keys, types and the search order. Checks against plugin schemas
// live in config_options.cpp.
#include <polygrad/config.hpp>
#include <polygrad/error.hpp>

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace polygrad {

namespace fs = std::filesystem;

namespace {

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

const char* type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Undefined:
      return "nothing";
  }
  return "?";
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

std::optional<std::pair<std::string, int>> parse_device_name(const std::string& name) {
  size_t colon = name.find(':');
  std::string prefix = name.substr(0, colon);
  if (prefix.empty()) return std::nullopt;
  for (char c : prefix)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return std::nullopt;
  if (colon == std::string::npos) return std::make_pair(prefix, -1);
  std::string digits = name.substr(colon + 1);
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return std::make_pair(prefix, std::stoi(digits));
}

std::string Config::message(int line, const std::string& key, const std::string& what) const {
  std::string where = path_.empty() ? std::string("<config>") : path_;
  return where + ":" + std::to_string(line) + ": " + key + ": " + what;
}

Config Config::parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error(path + ":0: (file): cannot read the config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_string(text.str(), path);
}

Config Config::parse_string(const std::string& text, const std::string& file_name) {
  Config config;
  config.path_ = file_name;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's marks are 0-based.
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    std::string where =
        e.mark.is_null() ? std::string() : " (column " + std::to_string(e.mark.column + 1) + ")";
    user_error(config.message(line, "(yaml)", "malformed YAML: " + e.msg + where));
  }
  if (root.IsNull() || !root.IsDefined()) return config;
  if (!root.IsMap())
    user_error(config.message(line_of(root), "(top level)",
                              std::string("expected a map of settings, got ") + type_name(root)));

  fs::path base = fs::path(file_name).parent_path();
  std::map<std::string, int> seen;
  for (auto it = root.begin(); it != root.end(); ++it) {
    // Copies: the iterator yields a temporary pair, references into it would dangle.
    const YAML::Node key_node = it->first;
    const YAML::Node value = it->second;
    const int line = line_of(key_node);
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : std::string("?");
    if (auto [pos, fresh] = seen.emplace(key, line); !fresh)
      user_error(config.message(line, key,
                                "given twice (first on line " + std::to_string(pos->second) + ")"));
    if (key == "default_device") {
      if (!value.IsScalar())
        user_error(config.message(line, key,
                                  std::string("expected a device name, got ") + type_name(value)));
      if (!parse_device_name(value.Scalar()))
        user_error(config.message(line, key,
                                  "'" + value.Scalar() +
                                      "' is not a device name (expected e.g. cpu "
                                      "or cuda:1)"));
      config.default_device_ = value.Scalar();
      config.default_device_line_ = line;
    } else if (key == "plugin_paths") {
      if (!value.IsSequence())
        user_error(config.message(
            line, key, std::string("expected a list of paths, got ") + type_name(value)));
      for (size_t i = 0; i < value.size(); ++i) {
        const YAML::Node item = value[i];
        if (!item.IsScalar() || item.Scalar().empty())
          user_error(config.message(line_of(item) ? line_of(item) : line,
                                    key + "[" + std::to_string(i) + "]",
                                    std::string("expected a path, got ") + type_name(item)));
        fs::path p(item.Scalar());
        if (p.is_relative() && !base.empty()) p = base / p;
        config.plugin_paths_.push_back(p.lexically_normal().string());
      }
    } else if (key == "devices") {
      if (!value.IsMap())
        user_error(config.message(
            line, key, std::string("expected a map of device names, got ") + type_name(value)));
      std::map<std::string, int> seen_devices;
      for (auto dev = value.begin(); dev != value.end(); ++dev) {
        const YAML::Node name_node = dev->first;
        const YAML::Node opts = dev->second;
        DeviceConfig entry;
        entry.line = line_of(name_node);
        entry.name = name_node.IsScalar() ? name_node.Scalar() : std::string("?");
        const std::string dkey = "devices." + entry.name;
        auto parsed = parse_device_name(entry.name);
        if (!parsed)
          user_error(config.message(entry.line, dkey,
                                    "'" + entry.name +
                                        "' is not a device name (expected "
                                        "e.g. cpu or \"cpu:1\")"));
        entry.prefix = parsed->first;
        entry.index = parsed->second;
        if (auto [pos, fresh] = seen_devices.emplace(entry.name, entry.line); !fresh)
          user_error(config.message(
              entry.line, dkey, "given twice (first on line " + std::to_string(pos->second) + ")"));
        if (!opts.IsMap() && !opts.IsNull())
          user_error(config.message(entry.line, dkey,
                                    std::string("expected a map of options, "
                                                "got ") +
                                        type_name(opts)));
        if (opts.IsMap()) {
          std::map<std::string, int> seen_opts;
          for (auto opt = opts.begin(); opt != opts.end(); ++opt) {
            const YAML::Node key = opt->first;
            const YAML::Node val = opt->second;
            ConfigOption option;
            option.line = line_of(key);
            option.key = key.IsScalar() ? key.Scalar() : std::string("?");
            option.scalar = val.IsScalar();
            option.value = option.scalar ? val.Scalar() : std::string(type_name(val));
            if (auto [pos, fresh] = seen_opts.emplace(option.key, option.line); !fresh)
              user_error(config.message(
                  option.line, dkey + "." + option.key,
                  "given twice (first on line " + std::to_string(pos->second) + ")"));
            entry.options.push_back(std::move(option));
          }
        }
        config.devices_.push_back(std::move(entry));
      }
    } else {
      user_error(config.message(line, key,
                                "unknown key (expected default_device, "
                                "plugin_paths or devices)"));
    }
  }
  return config;
}

std::string Config::find_file() {
  std::string explicit_path = env_or_empty("POLYGRAD_CONFIG");
  if (!explicit_path.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(explicit_path, ec))
      user_error("POLYGRAD_CONFIG: '" + explicit_path + "' is not a readable file");
    return explicit_path;
  }
  std::error_code ec;
  if (fs::is_regular_file("polygrad.yaml", ec)) return fs::absolute("polygrad.yaml").string();
  std::string xdg = env_or_empty("XDG_CONFIG_HOME");
  fs::path user_dir;
  if (!xdg.empty() && fs::path(xdg).is_absolute()) {
    user_dir = fs::path(xdg);
  } else {
    std::string home = env_or_empty("HOME");
    if (home.empty()) return "";
    user_dir = fs::path(home) / ".config";
  }
  fs::path user_file = user_dir / "polygrad" / "config.yaml";
  if (fs::is_regular_file(user_file, ec)) return user_file.string();
  return "";
}

Config Config::load_default() {
  std::string path = find_file();
  return path.empty() ? Config() : parse_file(path);
}

}  // namespace polygrad
