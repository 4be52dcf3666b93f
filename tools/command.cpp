#include "command.hpp"

#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace po = boost::program_options;

namespace polygrad::cli {

Command::Command(std::string name, std::string usage)
    : name_(std::move(name)), usage_(std::move(usage)) {
  flags_.add_options()("help,h", "show this help");
}

void Command::positional(const char* name) {
  hidden_.add_options()(name, po::value<std::string>());
  positional_.add(name, 1);
}

std::optional<int> Command::parse(const std::vector<std::string>& args) {
  po::options_description all;
  all.add(flags_).add(hidden_);
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional_).run(), values_);
    po::notify(values_);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (has("help")) {
    std::cout << help();
    return kOk;
  }
  return std::nullopt;
}

std::string Command::value(const char* name) const {
  return values_[name].as<std::string>();
}

std::vector<std::string> Command::values(const char* name) const {
  if (!has(name)) return {};
  return values_[name].as<std::vector<std::string>>();
}

int Command::usage_error(const std::string& message) const {
  std::cerr << "polygrad " << name_ << ": " << message << "\n" << help();
  return kUsage;
}

std::string Command::help() const {
  std::ostringstream text;
  text << usage_ << flags_;
  return text.str();
}

}  // namespace polygrad::cli
