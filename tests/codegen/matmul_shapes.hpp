// Matmul kernel ASTs as the scheduler writes them, host-side panel layouts and plain C++
// references, shared by the matmul tests.
#ifndef POLYGRAD_TESTS_CODEGEN_MATMUL_SHAPES_HPP
#define POLYGRAD_TESTS_CODEGEN_MATMUL_SHAPES_HPP

#include <cstdint>
#include <vector>

#include "harness.hpp"

namespace polygrad_test {

/// out[i*N+j] = sum_k a[i*K+k] * b[k*N+j], the scheduler's matmul AST.
UOpRef matmul_ast(int64_t m, int64_t n, int64_t kk);
/// out[i*N+j] = sum_k a[i*K+k] * b[j*K+k] (a @ b.T, both operands k-major: the dot form).
UOpRef matmul_nt_ast(int64_t m, int64_t n, int64_t kk);
/// out[i*N+j] = sum_k a[k*M+i] * b[k*N+j] (a.T @ b: a read k-major, a row of a per k step).
UOpRef matmul_tn_ast(int64_t m, int64_t n, int64_t kk);
/// a (m, k) @ b (k, n) in float, summed in k order (exact for the small ints of exact_ints).
std::vector<float> plain_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                                int64_t kk, int64_t n);
/// a (m, k) in panels of 6-row blocks, each k-major (PanelPacking::row_operand).
std::vector<float> row_panels(const std::vector<float>& a, int64_t m, int64_t kk);
/// b (k, n) in panels of 16 columns; a last partial panel's missing columns hold `fill`.
std::vector<float> column_panels(const std::vector<float>& b, int64_t kk, int64_t n,
                                 float fill = 0.0f);
/// The cpu target pinned to an AVX2 host's shape: 32-byte vectors (16 registers), 2 compute
/// units, 32 KiB L1 and 512 KiB L2.
polygrad::codegen::Target avx2_target();
/// The same with an AVX-512 host's vectors: 64 bytes (16 float lanes, 32 registers). Plans for
/// it run on any host (clang splits the wider vectors where the host has none).
polygrad::codegen::Target avx512_target();
/// Runs `ast`, a matmul reading a from row panels and b from column panels, on host-packed
/// copies of small ints and expects plain C++'s exact values.
void expect_packed_matmul(const UOpRef& ast, const polygrad::codegen::Target& t, int64_t m,
                          int64_t kk, int64_t n);
/// The kernel against plain loops; `b_k_major`: b is (n, k) and the kernel computes a @ b.T.
/// Lowered for `target` (the cpu's when null).
void check_matmul(int64_t m, int64_t n, int64_t kk, bool b_k_major = false,
                  const polygrad::codegen::Target* target = nullptr);

}  // namespace polygrad_test

#endif  // POLYGRAD_TESTS_CODEGEN_MATMUL_SHAPES_HPP
