// polygrad config check FILE
#include <polygrad/registry.hpp>

#include <boost/program_options.hpp>

#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace po = boost::program_options;

namespace polygrad::cli {

int run_config(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: polygrad config check FILE\n"
      "Validate FILE (keys, types, device names, option keys and ranges) against the plugins\n"
      "discovery loads. Prints \"FILE: ok\", or the error as <file>:<line>: <key>: <what> and\n"
      "exits 1.\n";
  po::options_description options("options");
  options.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("action", po::value<std::string>())("file", po::value<std::string>());
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("action", 1).add("file", 1);
  po::variables_map vm;
  std::ostringstream help;
  help << usage << options;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("config", e.what(), help.str());
  }
  if (vm.count("help")) {
    std::cout << help.str();
    return kOk;
  }
  if (!vm.count("action")) return usage_error("config", "missing action (check)", help.str());
  const std::string action = vm["action"].as<std::string>();
  if (action != "check")
    return usage_error("config", "unknown action '" + action + "'", help.str());
  if (!vm.count("file")) return usage_error("config", "missing FILE", help.str());
  const std::string file = vm["file"].as<std::string>();

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
