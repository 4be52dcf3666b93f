// polygrad-conformance PLUGIN.so [--option KEY=VALUE]... [--json] [--abi-only] [--verbose]
#include <polygrad/conformance.hpp>

#include <cstring>
#include <iostream>

namespace {

void usage(std::ostream& out) {
  out << "usage: polygrad-conformance PLUGIN.so [--option KEY=VALUE]... [--json] [--abi-only]\n"
         "                            [--verbose] [--help]\n"
         "\n"
         "Checks a polygrad device plugin against the plugin SDK: ABI negotiation, allocator,\n"
         "every kernel-program op on every declared dtype and vector width, error paths.\n"
         "  --option KEY=VALUE  a plugin option, as get_option hands it to the plugin (checked\n"
         "              against the plugin's option schema); may be repeated\n"
         "  --json      write one JSON object instead of text\n"
         "  --abi-only  run only the ABI-negotiation suite\n"
         "  --verbose   list passing checks too\n"
         "Exit status: 0 all checks passed, 1 a check failed, 2 the plugin could not be loaded\n"
         "or the command line is wrong.\n";
}

}  // namespace

int main(int argc, char** argv) {
  polygrad::conformance::Options options;
  for (int k = 1; k < argc; ++k) {
    const char* arg = argv[k];
    if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
      usage(std::cout);
      return 0;
    }
    if (std::strcmp(arg, "--option") == 0 || std::strncmp(arg, "--option=", 9) == 0) {
      const char* text = arg[8] == '=' ? arg + 9 : (k + 1 < argc ? argv[++k] : "");
      std::pair<std::string, std::string> option;
      if (!polygrad::conformance::parse_option(text, option)) {
        std::cerr << "polygrad-conformance: --option takes KEY=VALUE, got '" << text << "'\n";
        usage(std::cerr);
        return 2;
      }
      options.plugin_options.push_back(option);
    } else if (std::strcmp(arg, "--json") == 0) {
      options.json = true;
    } else if (std::strcmp(arg, "--abi-only") == 0) {
      options.abi_only = true;
    } else if (std::strcmp(arg, "--verbose") == 0 || std::strcmp(arg, "-v") == 0) {
      options.verbose = true;
    } else if (arg[0] == '-' || !options.plugin_path.empty()) {
      std::cerr << "polygrad-conformance: unexpected argument '" << arg << "'\n";
      usage(std::cerr);
      return 2;
    } else {
      options.plugin_path = arg;
    }
  }
  if (options.plugin_path.empty()) {
    std::cerr << "polygrad-conformance: no plugin given\n";
    usage(std::cerr);
    return 2;
  }
  return polygrad::conformance::run(options, std::cout);
}
