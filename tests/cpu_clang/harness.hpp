// Test harness of the cpu_clang suite: the plugin through the shared driver
// (tests/plugin_driver), a private temporary directory, and a double scalar's launch bits.
#ifndef POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP
#define POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP

#include "../plugin_driver/plugin_driver.hpp"

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace polygrad::test {

/// A fresh private directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  /// Regular files directly inside the directory.
  std::vector<std::string> files() const;

 private:
  std::string path_;
};

/// The cpu_clang plugin, its programs loaded as C source.
class Plugin : public PluginDriver {
 public:
  explicit Plugin(Options options = {})
      : PluginDriver(POLYGRAD_CPU_CLANG_PATH, PG_ARTIFACT_C_SOURCE, std::move(options)) {}
};

/// A double scalar argument as the launch ABI wants it (the bit pattern in an int64).
inline int64_t f64_bits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

}  // namespace polygrad::test

#endif  // POLYGRAD_TESTS_CPU_CLANG_HARNESS_HPP
