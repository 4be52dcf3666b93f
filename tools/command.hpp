// One subcommand's argument parsing: usage text, flags, positional arguments and the exit
// codes for --help and bad input, shared by every `polygrad <command>`.
#ifndef POLYGRAD_TOOLS_COMMAND_HPP
#define POLYGRAD_TOOLS_COMMAND_HPP

#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

namespace polygrad::cli {

/// The arguments of one subcommand. Declare flags and positionals, call parse(), then read.
class Command {
 public:
  /// `name` is the subcommand ("devices"); `usage` the text printed above the flags.
  Command(std::string name, std::string usage);

  /// Declare flags (--help is already declared): `command.flags()("json", "...")`.
  boost::program_options::options_description_easy_init flags() { return flags_.add_options(); }
  /// Declare the next positional argument, taken once.
  void positional(const char* name);

  /// Parse `args`. Returns nullopt when the command should go on; otherwise the exit code to
  /// return at once: kOk after printing the help to stdout, kUsage after a usage error.
  std::optional<int> parse(const std::vector<std::string>& args);

  bool has(const char* name) const { return values_.count(name) > 0; }
  /// The value of a positional argument; has(name) must hold.
  std::string value(const char* name) const;
  /// Every value of a repeatable flag (declared with po::value<std::vector<std::string>>()).
  std::vector<std::string> values(const char* name) const;

  /// Print "polygrad <command>: <message>" and the help to stderr; return kUsage.
  int usage_error(const std::string& message) const;

 private:
  std::string help() const;

  std::string name_;
  std::string usage_;
  boost::program_options::options_description flags_{"options"};
  boost::program_options::options_description hidden_;
  boost::program_options::positional_options_description positional_;
  boost::program_options::variables_map values_;
};

}  // namespace polygrad::cli

#endif  // POLYGRAD_TOOLS_COMMAND_HPP
