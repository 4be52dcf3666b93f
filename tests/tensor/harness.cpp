#include "harness.hpp"

#include <cmath>
#include <fstream>
#include <mutex>
#include <sstream>

namespace tensor_test {

namespace {

pg_dtype parse_dtype(const std::string& name) {
  static const std::map<std::string, pg_dtype> names = {
      {"float32", PG_DTYPE_FLOAT32}, {"float64", PG_DTYPE_FLOAT64}, {"int32", PG_DTYPE_INT32},
      {"int64", PG_DTYPE_INT64},     {"bool", PG_DTYPE_BOOL},       {"uint8", PG_DTYPE_UINT8}};
  auto it = names.find(name);
  if (it == names.end()) throw std::runtime_error("fixture: unknown dtype " + name);
  return it->second;
}

// Format, one array per line:  <case> <key> <dtype> <ndim> <dims...> <values...>
std::map<std::string, Case> load(const std::string& file) {
  std::string path = std::string(POLYGRAD_TENSOR_FIXTURES) + "/" + file + ".txt";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("fixture: cannot open " + path);
  std::map<std::string, Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, key;
    Array a;
    size_t ndim = 0;
    ss >> name >> key >> a.dtype >> ndim;
    a.shape.resize(ndim);
    int64_t n = 1;
    for (auto& d : a.shape) {
      ss >> d;
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      std::string tok;
      ss >> tok;
      a.values.push_back(std::strtod(tok.c_str(), nullptr));
    }
    Case& c = cases[name];
    c.name = name;
    c.arrays[key] = std::move(a);
  }
  return cases;
}

}  // namespace

Tensor Array::tensor() const {
  pg_dtype t = parse_dtype(dtype);
  std::vector<double> v = values;
  Tensor d(v, shape.empty() ? std::vector<int64_t>{1} : shape);
  if (shape.empty()) d = d.reshape({});
  return d.cast(t).realize();
}

const Array& Case::at(const std::string& key) const {
  auto it = arrays.find(key);
  if (it == arrays.end()) throw std::runtime_error("fixture case " + name + " lacks " + key);
  return it->second;
}

const std::map<std::string, Case>& fixture(const std::string& file) {
  static std::mutex m;
  static std::map<std::string, std::map<std::string, Case>> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, load(file)).first;
  return it->second;
}

void expect_values(const Tensor& got, const std::vector<int64_t>& shape,
                   const std::vector<double>& want, double atol, double rtol) {
  ASSERT_EQ(got.shape(), shape);
  std::vector<double> v = got.to_vector<double>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "at " << i << ": got " << v[i] << ", want nan";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(v[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(v[i], want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
    }
  }
}

void expect_close(const Tensor& got, const Array& want, double atol, double rtol) {
  expect_values(got, want.shape, want.values, atol, rtol);
}

}  // namespace tensor_test
