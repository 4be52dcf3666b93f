// polygrad conformance PLUGIN [--json] [--abi-only] [--verbose]
#include <polygrad/conformance.hpp>
#include <polygrad/registry.hpp>

#include <boost/program_options.hpp>

#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace po = boost::program_options;

namespace polygrad::cli {

int run_conformance(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: polygrad conformance PLUGIN [--json] [--abi-only] [--verbose]\n"
      "Run the SDK conformance kit on PLUGIN: a plugin name found by discovery (cpu_clang) or\n"
      "the path of a .so. Exits 0 when every check passed, 1 when any failed, 2 when the\n"
      "plugin could not be loaded.\n";
  po::options_description options("options");
  options.add_options()("help,h", "show this help")("json", "print one JSON object")(
      "abi-only", "run only the ABI-negotiation suite")("verbose,v", "list passing checks too");
  po::options_description hidden;
  hidden.add_options()("plugin", po::value<std::string>());
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("plugin", 1);
  po::variables_map vm;
  std::ostringstream help;
  help << usage << options;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error("conformance", e.what(), help.str());
  }
  if (vm.count("help")) {
    std::cout << help.str();
    return kOk;
  }
  if (!vm.count("plugin")) return usage_error("conformance", "missing PLUGIN", help.str());
  std::string plugin = vm["plugin"].as<std::string>();

  conformance::Options run_options;
  const bool is_path = plugin.find('/') != std::string::npos ||
                       (plugin.size() > 3 && plugin.compare(plugin.size() - 3, 3, ".so") == 0);
  run_options.plugin_path = is_path ? plugin : Registry::global().find_plugin(plugin);
  if (run_options.plugin_path.empty()) {
    std::cerr << "polygrad conformance: no plugin named '" << plugin
              << "' was found (`polygrad devices --verbose` lists the candidates)\n";
    return kUsage;
  }
  run_options.json = vm.count("json") > 0;
  run_options.abi_only = vm.count("abi-only") > 0;
  run_options.verbose = vm.count("verbose") > 0;
  return conformance::run(run_options, std::cout);
}

}  // namespace polygrad::cli
