// The `polygrad` command line: one function per subcommand.
#ifndef POLYGRAD_TOOLS_CLI_HPP
#define POLYGRAD_TOOLS_CLI_HPP

#include <string>
#include <vector>

namespace polygrad::cli {

/// Exit codes shared by every subcommand.
constexpr int kOk = 0;
constexpr int kFailed = 1;  ///< the command ran and found a problem
constexpr int kUsage = 2;   ///< bad flag, missing argument, unknown subcommand

/// Each takes the arguments after its own name.
int run_devices(const std::vector<std::string>& args);
int run_config(const std::vector<std::string>& args);
#ifdef POLYGRAD_HAVE_CONFORMANCE
int run_conformance(const std::vector<std::string>& args);
#endif

}  // namespace polygrad::cli

#endif  // POLYGRAD_TOOLS_CLI_HPP
