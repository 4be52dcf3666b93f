// polygrad conformance PLUGIN [--option KEY=VALUE]... [--no-corpus] [--reference DEVICE]
// [--json] [--abi-only] [--verbose]: the SDK's conformance kit, then the host corpus
// (corpus.hpp) on the plugin's device through the host's own codegen.
#include <polygrad/config.hpp>
#include <polygrad/conformance.hpp>
#include <polygrad/registry.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli.hpp"
#include "command.hpp"
#include "corpus.hpp"

namespace polygrad::cli {

namespace {

namespace fs = std::filesystem;
using OptionList = std::vector<std::pair<std::string, std::string>>;

std::string yaml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The user's config (if any) with `plugin` added to plugin_paths and `options` set for every
/// device of `prefix`, as YAML: the host hands the corpus's plugin the options the kit's
/// get_option hands it.
std::string config_with_options(const std::string& plugin, const std::string& prefix,
                                const OptionList& options) {
  const Config user = Config::load_default();
  std::map<std::string, std::map<std::string, std::string>> devices;
  for (const DeviceConfig& d : user.devices())
    for (const ConfigOption& o : d.options) devices[d.name][o.key] = o.value;
  for (const auto& [key, value] : options) devices[prefix][key] = value;
  std::string text;
  if (user.default_device())
    text += "default_device: " + yaml_quoted(*user.default_device()) + "\n";
  text += "plugin_paths:\n";
  for (const std::string& p : user.plugin_paths()) text += "  - " + yaml_quoted(p) + "\n";
  text += "  - " + yaml_quoted(plugin) + "\n";
  text += "devices:\n";
  for (const auto& [name, values] : devices) {
    text += "  " + yaml_quoted(name) + ":\n";
    for (const auto& [key, value] : values)
      text += "    " + yaml_quoted(key) + ": " + yaml_quoted(value) + "\n";
  }
  return text;
}

/// The device prefix `path`'s plugin declares, read through a registry of its own (the global
/// one must not start before its config is in place).
std::string plugin_prefix(const std::string& path) {
  Registry probe;
  const LoadRecord record = probe.load(path);
  return record.loaded() ? record.device_prefix : "";
}

/// Makes the process-wide registry, which the Tensor API uses, see the options: a config file
/// that POLYGRAD_CONFIG names until discovery has read it. "" or why it could not.
std::string install_options(const std::string& path, const OptionList& options) {
  const std::string prefix = plugin_prefix(path);
  if (prefix.empty()) return "the plugin did not load in the host";
  const fs::path file =
      fs::temp_directory_path() / ("polygrad-conformance-" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream out(file);
    out << config_with_options(path, prefix, options);
    if (!out) return "could not write " + file.string();
  }
  const char* before = std::getenv("POLYGRAD_CONFIG");
  const std::optional<std::string> user_config =
      before ? std::optional<std::string>(before) : std::nullopt;
  setenv("POLYGRAD_CONFIG", file.c_str(), 1);
  std::string error;
  try {
    Registry::global().discover();
  } catch (const Error& e) {
    error = std::string("the host refused the options: ") + e.what();
  }
  std::error_code ec;
  fs::remove(file, ec);
  if (user_config)
    setenv("POLYGRAD_CONFIG", user_config->c_str(), 1);
  else
    unsetenv("POLYGRAD_CONFIG");
  return error;
}

/// The host corpus as a kit suite: the plugin's device 0 against the device `reference_name`.
conformance::SuiteResult corpus_suite(const std::string& path, const std::string& install_error,
                                      const std::string& reference_name) {
  conformance::SuiteResult skipped;
  auto skip = [&](const std::string& why) {
    skipped.checks.push_back({"corpus", conformance::Status::skip, why});
    return skipped;
  };
  if (!install_error.empty()) return skip(install_error);
  Registry& registry = Registry::global();
  LoadRecord record;
  try {
    record = registry.load(path);
  } catch (const Error& e) {
    return skip(std::string("the host could not load the plugin: ") + e.what());
  }
  if (!record.loaded() || record.device_count == 0)
    return skip("the host loaded no device of the plugin: " + format_record(record));
  const std::string device = record.device_prefix + ":0";
  std::string reference;
  try {
    reference = registry.device(reference_name).name();
  } catch (const Error& e) {
    return skip(std::string("no reference device: ") + e.what());
  }
  return run_corpus(device, reference);
}

}  // namespace

int run_conformance(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  const std::string usage =
      "usage: polygrad conformance PLUGIN [--option KEY=VALUE]... [--no-corpus]\n"
      "                            [--reference DEVICE] [--json] [--abi-only] [--verbose]\n"
      "Run the SDK conformance kit on PLUGIN (a plugin name found by discovery, such as\n"
      "cpu_clang, or the path of a .so), then the host corpus: graphs (elementwise,\n"
      "broadcasts, reductions, softmax, matmul, conv, gather) on every declared dtype, lowered\n"
      "by the host's codegen for the plugin's device and compared with the reference device\n"
      "(cpu unless --reference names another). Exits 0 when every check passed, 1 when any\n"
      "failed, 2 when the plugin could not be loaded.\n";
  Command command("conformance", usage);
  command.flags()("option", po::value<std::vector<std::string>>()->value_name("KEY=VALUE"),
                  "a plugin option, for the kit and the host alike; may be repeated")(
      "no-corpus", "run only the kit, not the host corpus")(
      "reference", po::value<std::string>()->value_name("DEVICE"),
      "the device the corpus compares with (default cpu)")("json", "print one JSON object")(
      "abi-only", "run only the ABI-negotiation suite")("verbose,v", "list passing checks too");
  command.positional("plugin");
  if (auto done = command.parse(args)) return *done;
  if (!command.has("plugin")) return command.usage_error("missing PLUGIN");
  const std::string plugin = command.value("plugin");

  conformance::Options run_options;
  for (const std::string& text : command.values("option")) {
    std::pair<std::string, std::string> option;
    if (!conformance::parse_option(text, option))
      return command.usage_error("--option takes KEY=VALUE, got '" + text + "'");
    run_options.plugin_options.push_back(option);
  }
  const bool is_path = plugin.find('/') != std::string::npos ||
                       (plugin.size() > 3 && plugin.compare(plugin.size() - 3, 3, ".so") == 0);
  std::string path;
  if (is_path) {
    path = plugin;
  } else if (run_options.plugin_options.empty()) {
    path = Registry::global().find_plugin(plugin);
  } else {
    Registry probe;  // the global registry waits for the options' config
    path = probe.find_plugin(plugin);
  }
  if (path.empty()) {
    std::cerr << "polygrad conformance: no plugin named '" << plugin
              << "' was found (`polygrad devices --verbose` lists the candidates)\n";
    return kUsage;
  }
  path = fs::absolute(path).string();
  run_options.plugin_path = path;
  run_options.json = command.has("json");
  run_options.abi_only = command.has("abi-only");
  run_options.verbose = command.has("verbose");
  if (!command.has("no-corpus")) {
    const OptionList options = run_options.plugin_options;
    const std::string reference = command.has("reference") ? command.value("reference") : "cpu";
    run_options.extra_suites.push_back({"corpus", [options, reference](const std::string& so) {
                                          const std::string installed =
                                              options.empty() ? "" : install_options(so, options);
                                          return corpus_suite(so, installed, reference);
                                        }});
  }
  return conformance::run(run_options, std::cout);
}

}  // namespace polygrad::cli
