// The core tests' plugin (tests/core/test_plugin: device prefix "testdev", two host-memory
// devices running the template interpreter) as a second device beside cpu, and scoped
// environment variables to make it the default device or to make its calls fail
// (POLYGRAD_TEST_HOST_FAULT, see the plugin's header comment).
#ifndef POLYGRAD_TESTS_TENSOR_TEST_DEVICE_HPP
#define POLYGRAD_TESTS_TENSOR_TEST_DEVICE_HPP

#include <polygrad/registry.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace tensor_test {

/// Loads the test plugin into the process-wide registry (once; later calls find it loaded).
inline void load_test_plugin() {
  polygrad::LoadRecord r = polygrad::Registry::global().load(PG_TEST_PLUGIN);
  ASSERT_TRUE(r.loaded()) << r.reason;
  ASSERT_EQ(r.device_prefix, "testdev");
}

/// Sets an environment variable (unsets it for nullopt) and restores it at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void set(const std::optional<std::string>& v) {
    if (v)
      setenv(name_.c_str(), v->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  std::string name_;
  std::optional<std::string> old_;
};

/// Makes the listed calls of the test plugin fail while it lives ("launch", "render:E_", ...).
class TestDeviceFault : public ScopedEnv {
 public:
  explicit TestDeviceFault(const std::string& spec) : ScopedEnv("POLYGRAD_TEST_HOST_FAULT", spec) {}
};

/// Every call of the test plugin that would compute, compile or allocate fails: what still
/// realises ran elsewhere.
inline constexpr const char* kNoTestDeviceWork = "render,load,launch,alloc";

}  // namespace tensor_test

#endif  // POLYGRAD_TESTS_TENSOR_TEST_DEVICE_HPP
