// polygrad conformance PLUGIN [--json] [--abi-only] [--verbose]
#include <polygrad/conformance.hpp>
#include <polygrad/registry.hpp>

#include <iostream>

#include "cli.hpp"
#include "command.hpp"

namespace polygrad::cli {

int run_conformance(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: polygrad conformance PLUGIN [--json] [--abi-only] [--verbose]\n"
      "Run the SDK conformance kit on PLUGIN: a plugin name found by discovery (cpu_clang) or\n"
      "the path of a .so. Exits 0 when every check passed, 1 when any failed, 2 when the\n"
      "plugin could not be loaded.\n";
  Command command("conformance", usage);
  command.flags()("json", "print one JSON object")(
      "abi-only", "run only the ABI-negotiation suite")("verbose,v", "list passing checks too");
  command.positional("plugin");
  if (auto done = command.parse(args)) return *done;
  if (!command.has("plugin")) return command.usage_error("missing PLUGIN");
  const std::string plugin = command.value("plugin");

  conformance::Options run_options;
  const bool is_path = plugin.find('/') != std::string::npos ||
                       (plugin.size() > 3 && plugin.compare(plugin.size() - 3, 3, ".so") == 0);
  run_options.plugin_path = is_path ? plugin : Registry::global().find_plugin(plugin);
  if (run_options.plugin_path.empty()) {
    std::cerr << "polygrad conformance: no plugin named '" << plugin
              << "' was found (`polygrad devices --verbose` lists the candidates)\n";
    return kUsage;
  }
  run_options.json = command.has("json");
  run_options.abi_only = command.has("abi-only");
  run_options.verbose = command.has("verbose");
  return conformance::run(run_options, std::cout);
}

}  // namespace polygrad::cli
