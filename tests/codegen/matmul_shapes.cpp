// Matmul ASTs, panel layouts and references for the matmul tests (see matmul_shapes.hpp).
#include "matmul_shapes.hpp"

#include <gtest/gtest.h>

namespace polygrad_test {

using polygrad::range;

namespace {

/// o (m, n) = sum over k of a * b, each operand read k-major (a: (k, m); b: (n, k)) or not.
UOpRef product_ast(int64_t m, int64_t n, int64_t kk, bool a_k_major, bool b_k_major) {
  UOpRef i = range(idx(m), 0), j = range(idx(n), 1), k = range(idx(kk), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef b = global(2, dtypes::float32);
  UOpRef prod =
      load(a, a_k_major ? k * m + i : i * kk + k) * load(b, b_k_major ? j * kk + k : k * n + j);
  return sink({store(o, i * n + j, reduce(Op::ADD, prod, {k}))});
}

}  // namespace

UOpRef matmul_ast(int64_t m, int64_t n, int64_t kk) {
  return product_ast(m, n, kk, false, false);
}

std::vector<float> plain_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                                int64_t kk, int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t x = 0; x < kk; ++x)
      for (int64_t j = 0; j < n; ++j) c[r * n + j] += a[r * kk + x] * b[x * n + j];
  return c;
}

std::vector<float> row_panels(const std::vector<float>& a, int64_t m, int64_t kk) {
  std::vector<float> p(static_cast<size_t>((m + 5) / 6 * 6 * kk));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t x = 0; x < kk; ++x) p[r / 6 * kk * 6 + x * 6 + r % 6] = a[r * kk + x];
  return p;
}

std::vector<float> column_panels(const std::vector<float>& b, int64_t kk, int64_t n, float fill) {
  std::vector<float> p(static_cast<size_t>((n + 15) / 16 * 16 * kk), fill);
  for (int64_t x = 0; x < kk; ++x)
    for (int64_t c = 0; c < n; ++c) p[c / 16 * kk * 16 + x * 16 + c % 16] = b[x * n + c];
  return p;
}

polygrad::codegen::Target avx2_target() {
  polygrad::codegen::Target t = cpu_target();
  t.caps.vector_width_bytes = 32;
  t.caps.compute_units = 2;
  t.caps.l1_cache_bytes = 32 << 10;
  t.caps.l2_cache_bytes = 512 << 10;
  return t;
}

polygrad::codegen::Target avx512_target() {
  polygrad::codegen::Target t = avx2_target();
  t.caps.vector_width_bytes = 64;
  return t;
}

void expect_packed_matmul(const UOpRef& ast, const polygrad::codegen::Target& t, int64_t m,
                          int64_t kk, int64_t n) {
  std::vector<float> av = exact_ints(m * kk, 3), bv = exact_ints(kk * n, 8);
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(row_panels(av, m, kk)),
                            HostBuf::of(column_panels(bv, kk, n))};
  run(compile(ast, t), bufs);
  EXPECT_EQ(bufs[0].as<float>(), plain_matmul(av, bv, m, kk, n));
}

UOpRef matmul_nt_ast(int64_t m, int64_t n, int64_t kk) {
  return product_ast(m, n, kk, false, true);
}

UOpRef matmul_tn_ast(int64_t m, int64_t n, int64_t kk) {
  return product_ast(m, n, kk, true, false);
}

void check_matmul(int64_t m, int64_t n, int64_t kk, bool b_k_major,
                  const polygrad::codegen::Target* target) {
  std::vector<float> a = exact_ints(m * kk, 1), b = exact_ints(kk * n, 5);
  std::vector<float> want(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (int64_t k = 0; k < kk; ++k) s += a[i * kk + k] * b[b_k_major ? j * kk + k : k * n + j];
      want[i * n + j] = s;
    }
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(m * n), HostBuf::of(a), HostBuf::of(b)};
  const UOpRef ast = b_k_major ? matmul_nt_ast(m, n, kk) : matmul_ast(m, n, kk);
  run(compile(ast, target != nullptr ? *target : cpu_target()), bufs);
  EXPECT_EQ(bufs[0].as<float>(), want)
      << m << "x" << n << "x" << kk << (b_k_major ? " (a @ b.T)" : "");
}

}  // namespace polygrad_test
