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
  int bad = 0;
  std::string report;
  for (size_t i = 0; i < v.size(); ++i) {
    bool ok = std::isnan(want[i])   ? std::isnan(v[i])
              : std::isinf(want[i]) ? v[i] == want[i]
                                    : std::fabs(v[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (ok) continue;
    if (++bad <= 5)
      report += "  at " + std::to_string(i) + ": got " + std::to_string(v[i]) + ", want " +
                std::to_string(want[i]) + "\n";
  }
  EXPECT_EQ(bad, 0) << bad << " of " << v.size() << " values differ:\n" << report;
}

void expect_close(const Tensor& got, const Array& want, double atol, double rtol) {
  expect_values(got, want.shape, want.values, atol, rtol);
}

void run_case(const std::string& file, const OpTable& table, const std::string& name, double atol,
              double rtol) {
  const auto& cases = fixture(file);
  auto c = cases.find(name);
  ASSERT_NE(c, cases.end()) << "no fixture case " << name << " in " << file;
  const Array& want = c->second.at("out");
  Tensor got = table.at(name)(c->second);
  EXPECT_EQ(polygrad::dtype_name(got.dtype()), want.dtype) << name;
  expect_close(got, want, atol, rtol);
}

void expect_same_cases(const std::string& file, const OpTable& table) {
  for (const auto& [name, c] : fixture(file))
    EXPECT_TRUE(table.count(name)) << "fixture case " << name << " has no test";
  for (const auto& [name, fn] : table)
    EXPECT_TRUE(fixture(file).count(name)) << "test " << name << " has no fixture case";
}

std::vector<std::string> keys(const OpTable& table) {
  std::vector<std::string> out;
  for (const auto& [name, fn] : table) out.push_back(name);
  return out;
}

}  // namespace tensor_test
