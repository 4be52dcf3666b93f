// Registry options that see only the plugins a test names, shared by test suites that need no
// other test plugin (test_support.hpp, the cuda plugin's tests).
#ifndef POLYGRAD_TESTS_CORE_ISOLATED_REGISTRY_HPP
#define POLYGRAD_TESTS_CORE_ISOLATED_REGISTRY_HPP

#include <polygrad/registry.hpp>

#include <string>
#include <utility>
#include <vector>

namespace polygrad_test {

/// Options for a registry that sees only `paths` (and `config`, when given).
inline polygrad::RegistryOptions isolated(std::vector<std::string> paths,
                                          const std::string& config = "") {
  polygrad::RegistryOptions o;
  o.plugin_paths = std::move(paths);
  o.use_env = false;
  o.use_libdir = false;
  o.use_build_tree = false;
  o.search_config = false;
  o.config_path = config;
  return o;
}

}  // namespace polygrad_test

#endif  // POLYGRAD_TESTS_CORE_ISOLATED_REGISTRY_HPP
