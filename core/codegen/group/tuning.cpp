// The group strategy's shapes, with a tuning override from the environment (tuning.hpp).
#include "codegen/group/tuning.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>

#include "ir/error.hpp"

namespace polygrad::codegen::group_tuning {

namespace {

/// The five positive integers of `name`'s value, or none when it is unset.
std::vector<int64_t> five_from_env(const char* name, const char* form) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return {};
  std::vector<int64_t> out;
  std::stringstream in(v);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || x <= 0 || x > 4096)
      out.push_back(-1);
    else
      out.push_back(x);
  }
  if (out.size() != 5 || std::count(out.begin(), out.end(), -1) > 0)
    ir_error(std::string(name) + "='" + v + "': expected five positive integers, " + form);
  return out;
}

}  // namespace

const std::vector<TileShape>& tile_shapes() {
  static const std::vector<TileShape> shapes = [] {
    std::vector<TileShape> s(std::begin(kTileShapes), std::end(kTileShapes));
    const std::vector<int64_t> v = five_from_env("POLYGRAD_GPU_TILE", "m,n,k,reg_m,reg_n");
    if (!v.empty()) {
      const TileShape t{v[0], v[1], v[2], v[3], v[4]};
      if (t.m % t.reg_m != 0 || t.n % t.reg_n != 0)
        ir_error("POLYGRAD_GPU_TILE: reg_m and reg_n must divide m and n");
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
        five_from_env("POLYGRAD_GPU_WMMA", "warps_m,warps_n,frag_m,frag_n,k_steps");
    if (!v.empty()) s.insert(s.begin(), WmmaShape{v[0], v[1], v[2], v[3], v[4]});
    return s;
  }();
  return shapes;
}

const std::string& overrides() {
  static const std::string key = [] {
    std::string k;
    for (const char* name : {"POLYGRAD_GPU_TILE", "POLYGRAD_GPU_WMMA"}) {
      const char* v = std::getenv(name);
      if (v != nullptr && *v != '\0') k += std::string(name) + "=" + v + ";";
    }
    return k;
  }();
  return key;
}

}  // namespace polygrad::codegen::group_tuning
