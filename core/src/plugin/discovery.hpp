// Internal: where plugin candidates come from.
#ifndef POLYGRAD_SRC_PLUGIN_DISCOVERY_HPP
#define POLYGRAD_SRC_PLUGIN_DISCOVERY_HPP

#include <optional>
#include <string>
#include <vector>

namespace polygrad::detail {

/// Directory of libpolygrad.so itself (found with dladdr), or "" when unknown.
std::string library_dir();

/// The build tree's plugin directory when this libpolygrad is the one of that build tree (not
/// an installed or copied one), else "".
std::string build_tree_plugin_dir();

/// Split a colon-separated list, dropping empty entries.
std::vector<std::string> split_path_list(const std::string& list);

/// The device plugin files in `dir` (named polygrad_*.so, but not polygrad_ccl_*.so), sorted.
std::vector<std::string> plugin_files_in(const std::string& dir);

/// "x" for ".../polygrad_x.so", nullopt for any other file name.
std::optional<std::string> plugin_name_from_file(const std::string& path);

/// The collective-communication plugin files in `dir` (polygrad_ccl_*.so), sorted by name.
std::vector<std::string> ccl_plugin_files_in(const std::string& dir);

/// "x" for ".../polygrad_ccl_x.so", nullopt for any other file name.
std::optional<std::string> ccl_plugin_name_from_file(const std::string& path);

/// `path` made absolute and free of symlinks and dot segments where possible.
std::string canonical_path(const std::string& path);

}  // namespace polygrad::detail

#endif  // POLYGRAD_SRC_PLUGIN_DISCOVERY_HPP
