// Helpers shared by the core tests: temporary directories, scoped environment variables,
// isolated registries and the paths CMake passes in.
#ifndef POLYGRAD_TESTS_CORE_TEST_SUPPORT_HPP
#define POLYGRAD_TESTS_CORE_TEST_SUPPORT_HPP

#include <polygrad/registry.hpp>

#include "isolated_registry.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace polygrad_test {

namespace fs = std::filesystem;

/// Paths from the build (compile definitions).
inline const std::string kTestPlugin = PG_TEST_PLUGIN;       // polygrad_test_host.so
inline const std::string kBrokenDir = PG_BROKEN_PLUGIN_DIR;  // the broken plugins
inline std::string broken(const std::string& kind) {
  return kBrokenDir + "/polygrad_broken_" + kind + ".so";
}

/// A fresh directory, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "polygrad_test_XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) std::abort();
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  /// Write `text` to `name` inside the directory; returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  /// Copy `file` into the directory as `name`; returns the full path.
  std::string copy(const std::string& file, const std::string& name) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    fs::copy_file(file, p, fs::copy_options::overwrite_existing);
    return p.string();
  }

 private:
  fs::path path_;
};

/// Sets (or unsets, with nullopt) an environment variable; restores it at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// The message of the polygrad::Error `fn` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const polygrad::Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// The record for `path` in `report`, or nullptr.
inline const polygrad::LoadRecord* record_for(const polygrad::LoadReport& report,
                                              const std::string& path) {
  std::string want = fs::weakly_canonical(path).string();
  for (const auto& r : report.records)
    if (r.path == want) return &r;
  return nullptr;
}

}  // namespace polygrad_test

#endif
