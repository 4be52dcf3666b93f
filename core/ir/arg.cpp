#include "ir/arg.hpp"

#include <bit>
#include <cstdio>
#include <functional>

namespace polygrad {

namespace {

struct ArgHash {
  size_t operator()(std::monostate) const { return 0; }
  size_t operator()(int64_t v) const { return std::hash<int64_t>{}(v); }
  size_t operator()(double v) const { return std::hash<uint64_t>{}(std::bit_cast<uint64_t>(v)); }
  size_t operator()(bool v) const { return v ? 1 : 2; }
  size_t operator()(const std::string& v) const { return std::hash<std::string>{}(v); }
  size_t operator()(const std::vector<int64_t>& v) const {
    size_t h = v.size();
    for (int64_t x : v) h = hash_mix(h, static_cast<size_t>(x));
    return h;
  }
  size_t operator()(const Var& v) const {
    return hash_mix(hash_mix(std::hash<std::string>{}(v.name), static_cast<size_t>(v.vmin)),
                    static_cast<size_t>(v.vmax));
  }
};

struct ArgText {
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const { return "\"" + v + "\""; }
  std::string operator()(const std::vector<int64_t>& v) const {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  }
  std::string operator()(const Var& v) const {
    return v.name + "[" + std::to_string(v.vmin) + ".." + std::to_string(v.vmax) + "]";
  }
};

}  // namespace

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

size_t arg_hash(const Arg& a) {
  return hash_mix(a.index(), std::visit(ArgHash{}, a));
}

std::string arg_to_string(const Arg& a) {
  return std::visit(ArgText{}, a);
}

}  // namespace polygrad
