// polygrad config check FILE
#include <polygrad/registry.hpp>

#include <iostream>

#include "cli.hpp"
#include "command.hpp"

namespace polygrad::cli {

int run_config(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: polygrad config check FILE\n"
      "Validate FILE (keys, types, device names, option keys and ranges) against the plugins\n"
      "discovery loads. Prints \"FILE: ok\", or the error as <file>:<line>: <key>: <what> and\n"
      "exits 1.\n";
  Command command("config", usage);
  command.positional("action");
  command.positional("file");
  if (auto done = command.parse(args)) return *done;
  if (!command.has("action")) return command.usage_error("missing action (check)");
  const std::string action = command.value("action");
  if (action != "check") return command.usage_error("unknown action '" + action + "'");
  if (!command.has("file")) return command.usage_error("missing FILE");
  const std::string file = command.value("file");

  RegistryOptions registry_options;
  registry_options.search_config = false;
  registry_options.config_path = file;
  Registry registry(registry_options);
  try {
    registry.discover();
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return kFailed;
  }
  std::cout << file << ": ok\n";
  return kOk;
}

}  // namespace polygrad::cli
