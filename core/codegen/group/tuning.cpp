// The group strategy's shapes, with a tuning override from the environment (tuning.hpp).
#include "codegen/group/tuning.hpp"

#include <cstdlib>
#include <sstream>
#include <string>

#include <polygrad/error.hpp>

namespace polygrad::codegen::group_tuning {

namespace {

/// The `count` positive integers of `name`'s value, or none when it is unset.
std::vector<int64_t> ints_from_env(const char* name, size_t count, const char* form) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return {};
  std::vector<int64_t> out;
  bool ok = true;
  std::stringstream in(v);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    ok = ok && !part.empty() && *end == '\0' && x > 0 && x <= 4096;
    out.push_back(x);
  }
  if (!ok || out.size() != count)
    user_error(std::string(name) + "='" + v + "': expected " +
               (count == 1 ? "a positive integer" : std::to_string(count) + " positive integers") +
               ", " + form);
  return out;
}

}  // namespace

const std::vector<TileShape>& tile_shapes() {
  static const std::vector<TileShape> shapes = [] {
    std::vector<TileShape> s(std::begin(kTileShapes), std::end(kTileShapes));
    const std::vector<int64_t> v = ints_from_env("POLYGRAD_GPU_TILE", 5, "m,n,k,reg_m,reg_n");
    if (!v.empty()) {
      const TileShape t{v[0], v[1], v[2], v[3], v[4]};
      if (t.m % t.reg_m != 0 || t.n % t.reg_n != 0)
        user_error("POLYGRAD_GPU_TILE: reg_m and reg_n must divide m and n");
      s.insert(s.begin(), t);
    }
    return s;
  }();
  return shapes;
}

const std::vector<WmmaShape>& wmma_shapes() {
  static const std::vector<WmmaShape> shapes = [] {
    std::vector<WmmaShape> s(std::begin(kWmmaShapes), std::end(kWmmaShapes));
    const std::vector<int64_t> v =
        ints_from_env("POLYGRAD_GPU_WMMA", 5, "warps_m,warps_n,frag_m,frag_n,k_steps");
    if (!v.empty()) s.insert(s.begin(), WmmaShape{v[0], v[1], v[2], v[3], v[4]});
    return s;
  }();
  return shapes;
}

int64_t row_threads() {
  static const int64_t threads = [] {
    const std::vector<int64_t> v =
        ints_from_env("POLYGRAD_GPU_ROW_THREADS", 1, "threads per row (a power of two)");
    if (v.empty()) return kRowThreads;
    if ((v[0] & (v[0] - 1)) != 0)
      user_error("POLYGRAD_GPU_ROW_THREADS=" + std::to_string(v[0]) + ": not a power of two");
    return v[0];
  }();
  return threads;
}

const std::string& overrides() {
  static const std::string key = [] {
    std::string k;
    for (const char* name :
         {"POLYGRAD_GPU_TILE", "POLYGRAD_GPU_WMMA", "POLYGRAD_GPU_ROW_THREADS"}) {
      const char* v = std::getenv(name);
      if (v != nullptr && *v != '\0') k += std::string(name) + "=" + v + ";";
    }
    return k;
  }();
  return key;
}

}  // namespace polygrad::codegen::group_tuning
