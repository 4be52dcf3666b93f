// polygrad: inspect plugins and devices, check config files, run the conformance kit.
#include <polygrad/plugin.h>
#include <polygrad/error.hpp>

#include <iostream>

#include "cli.hpp"

namespace {

const char* kUsageText =
    "usage: polygrad [--help] [--version] <command> [<args>]\n"
    "\n"
    "commands:\n"
    "  devices [--verbose] [--json]   list loaded plugins and their devices; --verbose adds\n"
    "                                 one line per plugin candidate, refused ones included\n"
    "  config check FILE              validate a YAML config against the loaded plugins\n"
#ifdef POLYGRAD_HAVE_CONFORMANCE
    "  conformance PLUGIN [--option KEY=VALUE]... [--no-corpus] [--json] [--abi-only]\n"
    "              [--verbose]        run the SDK conformance kit and the host corpus on a\n"
    "                                 plugin (name or path)\n"
#endif
    "\n"
    "`polygrad <command> --help` describes a command. Environment: POLYGRAD_CONFIG,\n"
    "POLYGRAD_DEVICE, POLYGRAD_PLUGIN_PATH, POLYGRAD_LOG (see docs/config.md).\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace polygrad::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << "polygrad: no command given\n" << kUsageText;
    return kUsage;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsageText;
    return kOk;
  }
  if (command == "--version") {
    std::cout << "polygrad " << POLYGRAD_VERSION << " (plugin ABI " << PG_PLUGIN_ABI_MAJOR << "."
              << PG_PLUGIN_ABI_MINOR << ", kernel ISA " << PG_KERNEL_ISA_VERSION << ")\n";
    return kOk;
  }
  try {
    if (command == "devices") return run_devices(args);
    if (command == "config") return run_config(args);
#ifdef POLYGRAD_HAVE_CONFORMANCE
    if (command == "conformance") return run_conformance(args);
#endif
  } catch (const polygrad::Error& e) {
    std::cerr << "polygrad " << command << ": " << e.what() << "\n";
    return kFailed;
  } catch (const std::exception& e) {
    std::cerr << "polygrad " << command << ": internal error: " << e.what() << "\n";
    return kFailed;
  }
  std::cerr << "polygrad: unknown " << (command.rfind('-', 0) == 0 ? "option" : "command") << " '"
            << command << "'\n"
            << kUsageText;
  return kUsage;
}
