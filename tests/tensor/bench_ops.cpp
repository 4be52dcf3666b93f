// Wall time of a few Tensor ops on the default device, warm kernel cache (not a test; the
// numbers in docs/tensor-api.md come from it): build/<dir>/bin/tensor_bench
#include <polygrad/tensor.hpp>

#include <chrono>
#include <cstdio>
#include <functional>

namespace {

using polygrad::Tensor;

// Mean milliseconds of realising f() `reps` times, after one warm-up run (compiles kernels).
double time_ms(const std::function<Tensor()>& f, int reps) {
  f().realize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f().realize();
  std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
  return dt.count() / reps;
}

}  // namespace

int main() {
  Tensor::manual_seed(0);
  Tensor a = Tensor::rand({512, 512}).realize(), b = Tensor::rand({512, 512}).realize();
  double mm = time_ms([&] { return a.matmul(b); }, 10);
  std::printf("matmul (512,512)@(512,512): %.2f ms, %.1f GFLOP/s\n", mm,
              2.0 * 512 * 512 * 512 / mm / 1e6);
  Tensor a3 = Tensor::rand({8, 1024, 144}).realize(), b2 = Tensor::rand({144, 32}).realize();
  std::printf("matmul (8,1024,144)@(144,32): %.2f ms\n", time_ms([&] { return a3.matmul(b2); }, 5));
  Tensor a4 = a3.reshape({8, 1024, 144}), b4 = Tensor::rand({8, 144, 32}).realize();
  std::printf("matmul (8,1024,144)@(8,144,32) batched: %.2f ms\n",
              time_ms([&] { return a4.matmul(b4); }, 2));
  Tensor s = Tensor::rand({1024, 1024}).realize();
  std::printf("softmax (1024,1024): %.2f ms\n", time_ms([&] { return s.softmax(); }, 10));
  Tensor x = Tensor::rand({8, 16, 32, 32}).realize(), w = Tensor::rand({32, 16, 3, 3}).realize();
  double cv = time_ms([&] { return x.conv2d(w, std::nullopt, 1, 1, 1, 1); }, 5);
  std::printf("conv2d (8,16,32,32)*(32,16,3,3) pad 1: %.2f ms, %.2f GFLOP/s\n", cv,
              2.0 * 8 * 32 * 32 * 32 * 16 * 9 / cv / 1e6);
  std::printf("max_pool2d (8,16,32,32) k2: %.2f ms\n",
              time_ms([&] { return x.max_pool2d(2); }, 10));
  Tensor c = Tensor::rand({64, 1024}).realize();
  std::printf("cumsum (64,1024) axis 1: %.2f ms\n", time_ms([&] { return c.cumsum(1); }, 5));
  return 0;
}
