#include "discovery.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>

namespace polygrad::detail {

namespace fs = std::filesystem;

namespace {
// Any function inside libpolygrad: dladdr on it names the library file.
void library_anchor() {}
}  // namespace

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_anchor), &info) == 0 || info.dli_fname == nullptr)
    return "";
  return fs::path(canonical_path(info.dli_fname)).parent_path().string();
}

std::string build_tree_plugin_dir() {
#ifdef POLYGRAD_BUILD_PLUGIN_DIR
  // Only for the library of the build tree itself (<build>/lib/polygrad/plugins beside
  // <build>/lib/libpolygrad.so): an installed or copied libpolygrad never falls back to the
  // build it came from.
  const fs::path dir = POLYGRAD_BUILD_PLUGIN_DIR;
  const std::string lib = library_dir();
  std::error_code ec;
  if (lib.empty() || !fs::equivalent(dir.parent_path().parent_path(), lib, ec)) return "";
  return dir.string();
#else
  return "";
#endif
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) parts.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::optional<std::string> plugin_name_from_file(const std::string& path) {
  std::string file = fs::path(path).filename().string();
  const std::string head = "polygrad_", tail = ".so";
  if (file.size() <= head.size() + tail.size()) return std::nullopt;
  if (file.compare(0, head.size(), head) != 0) return std::nullopt;
  if (file.compare(file.size() - tail.size(), tail.size(), tail) != 0) return std::nullopt;
  return file.substr(head.size(), file.size() - head.size() - tail.size());
}

std::optional<std::string> ccl_plugin_name_from_file(const std::string& path) {
  std::optional<std::string> name = plugin_name_from_file(path);
  const std::string head = "ccl_";
  if (!name || name->size() <= head.size() || name->compare(0, head.size(), head) != 0)
    return std::nullopt;
  return name->substr(head.size());
}

namespace {
/// The regular files in `dir` that `keep` accepts, sorted by name.
template <class Keep>
std::vector<std::string> files_in(const std::string& dir, Keep&& keep) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    if (keep(it->path().string())) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

std::vector<std::string> plugin_files_in(const std::string& dir) {
  return files_in(dir, [](const std::string& path) {
    return plugin_name_from_file(path).has_value() && !ccl_plugin_name_from_file(path);
  });
}

std::vector<std::string> ccl_plugin_files_in(const std::string& dir) {
  return files_in(
      dir, [](const std::string& path) { return ccl_plugin_name_from_file(path).has_value(); });
}

std::string canonical_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return fs::path(path).lexically_normal().string();
  return p.string();
}

}  // namespace polygrad::detail
