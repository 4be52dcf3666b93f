// The group strategy end to end on the GPU-semantics emulator (plugins/gpu_emulator): the schedules
// of softmax, layernorm and products read back, and every value against the cpu's.
#include "codegen/lower.hpp"
#include "graphs.hpp"
#include "random_values.hpp"
#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

namespace polygrad {
namespace {

using lazy::Shape;
using testgraph::random_floats;

int count(const codegen::LoweredKernel& k, pg_op op) {
  return static_cast<int>(std::count_if(k.instructions.begin(), k.instructions.end(),
                                        [&](const pg_instruction& in) { return in.op == op; }));
}

class GroupRealizeTest : public ::testing::Test {
 protected:
  std::string emu_ = runtime::canonical_device("emu");
  std::string cpu_ = runtime::canonical_device("cpu");

  /// The kernels of `root`'s schedule on the emulator, lowered for its target, and the groups
  /// each launches along dim 0.
  std::vector<codegen::LoweredKernel> kernels(const UOpRef& root) {
    std::vector<codegen::LoweredKernel> out;
    groups_.clear();
    for (const schedule::Item& item : runtime::cached_schedule({root}, emu_).items) {
      if (item.kind != schedule::Item::Kind::kernel) continue;
      out.push_back(codegen::lower(item.ast, runtime::device_target(emu_)));
      const std::unordered_map<std::string, int64_t> vars(item.vars.begin(), item.vars.end());
      groups_.push_back(out.back().launch_global(vars)[0]);
    }
    return out;
  }
  std::vector<int64_t> groups_;
  /// `graph(inputs)` realised on `dev` and read back as float32.
  template <typename Graph>
  std::vector<float> run(const std::string& dev, const std::vector<std::vector<float>>& in,
                         const std::vector<Shape>& shapes, const Graph& graph) {
    std::vector<UOpRef> args;
    for (size_t i = 0; i < in.size(); ++i)
      args.push_back(runtime::from_host(dev, dtypes::float32, shapes[i], in[i].data()));
    UOpRef r = runtime::realize({graph(args)}, dev)[0];
    std::vector<float> out(static_cast<size_t>(lazy::numel(lazy::shape_of(r))));
    runtime::to_host(r, out.data());
    return out;
  }
  template <typename Graph>
  UOpRef graph_on_emu(const std::vector<std::vector<float>>& in, const std::vector<Shape>& shapes,
                      const Graph& graph) {
    std::vector<UOpRef> args;
    for (size_t i = 0; i < in.size(); ++i)
      args.push_back(runtime::from_host(emu_, dtypes::float32, shapes[i], in[i].data()));
    return graph(args);
  }
};

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "at " << i;
}

TEST_F(GroupRealizeTest, SoftmaxAndLayernormOf4096SquaredAreOneKernelEachWithATree) {
  const int64_t n = 4096;
  const std::vector<std::vector<float>> in{random_floats(n * n, 7)};
  const std::vector<Shape> shapes{{n, n}};
  auto softmax = [&](const std::vector<UOpRef>& a) { return testgraph::softmax(a[0], n, n); };
  auto layernorm = [&](const std::vector<UOpRef>& a) { return testgraph::layernorm(a[0], n, n); };
  for (const bool norm : {false, true}) {
    const char* name = norm ? "layernorm" : "softmax";
    const std::vector<codegen::LoweredKernel> ks =
        norm ? kernels(graph_on_emu(in, shapes, layernorm))
             : kernels(graph_on_emu(in, shapes, softmax));
    ASSERT_EQ(ks.size(), 1u) << name;
    EXPECT_GE(count(ks[0], PG_OP_DEFINE_LOCAL), 2) << name;
    EXPECT_GT(count(ks[0], PG_OP_BARRIER), 0) << name;
    EXPECT_EQ(groups_[0], n) << name << ": a group per row";
  }
  expect_close(run(emu_, in, shapes, softmax), run(cpu_, in, shapes, softmax), 1e-5);
  expect_close(run(emu_, in, shapes, layernorm), run(cpu_, in, shapes, layernorm), 1e-4);
}

TEST_F(GroupRealizeTest, MatmulStagesLocalTiles) {
  const int64_t m = 300, k = 200, n = 260;  // none a multiple of a tile
  const std::vector<std::vector<float>> in{random_floats(m * k, 3), random_floats(k * n, 4)};
  const std::vector<Shape> shapes{{m, k}, {k, n}};
  auto mm = [&](const std::vector<UOpRef>& a) { return testgraph::matmul(a[0], a[1], m, k, n); };
  const std::vector<codegen::LoweredKernel> ks = kernels(graph_on_emu(in, shapes, mm));
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(count(ks[0], PG_OP_DEFINE_LOCAL), 2);
  EXPECT_EQ(count(ks[0], PG_OP_BARRIER), 2);
  // (sums of 200 products in another order: a few float roundings of the largest terms)
  expect_close(run(emu_, in, shapes, mm), run(cpu_, in, shapes, mm), 1e-4);
}

TEST_F(GroupRealizeTest, HalfMatmulUsesTheTensorCore) {
  const int64_t m = 192, k = 160, n = 128;
  const std::vector<std::vector<float>> in{random_floats(m * k, 5), random_floats(k * n, 6)};
  const std::vector<Shape> shapes{{m, k}, {k, n}};
  // As the Tensor layer builds a float16 matmul: the product in float16, summed in float32.
  auto mm = [&](const std::vector<UOpRef>& a) {
    const UOpRef a16 = lazy::cast(a[0], dtypes::float16), b16 = lazy::cast(a[1], dtypes::float16);
    const UOpRef ae = lazy::expand(lazy::reshape(a16, {m, 1, k}), {m, n, k});
    const UOpRef be = lazy::expand(lazy::reshape(lazy::permute(b16, {1, 0}), {1, n, k}), {m, n, k});
    const UOpRef prod = lazy::cast(testgraph::ew(Op::MUL, ae, be), dtypes::float32);
    return lazy::reshape(lazy::reduce(prod, Op::ADD, {2}), {m, n});
  };
  const std::vector<codegen::LoweredKernel> ks = kernels(graph_on_emu(in, shapes, mm));
  int wmma = 0;
  for (const codegen::LoweredKernel& kk : ks) wmma += count(kk, PG_OP_WMMA);
  EXPECT_GT(wmma, 0);
  const std::vector<float> got = run(emu_, in, shapes, mm);
  // The tensor core multiplies the float16 inputs exactly and sums in float32: against the
  // inputs rounded to float16 (by the cpu), multiplied and summed in double.
  std::vector<std::vector<float>> h;
  for (size_t i = 0; i < in.size(); ++i)
    h.push_back(run(cpu_, {in[i]}, {shapes[i]}, [](const std::vector<UOpRef>& a) {
      return lazy::cast(lazy::cast(a[0], dtypes::float16), dtypes::float32);
    }));
  std::vector<float> exact(static_cast<size_t>(m * n));
  std::vector<double> bound(exact.size());  // sum |products| * 2^-11: float16's rounding of each
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, size = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = double(h[0][i * k + kk]) * h[1][kk * n + j];
        sum += p;
        size += std::abs(p);
      }
      exact[i * n + j] = static_cast<float>(sum);
      bound[i * n + j] = size * std::ldexp(1.0, -11) + 1e-4;
    }
  expect_close(got, exact, 1e-5);
  // The cpu rounds each product to float16 (the Tensor layer's product is in float16): the two
  // differ by at most that rounding.
  const std::vector<float> cpu = run(cpu_, in, shapes, mm);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::abs(double(got[i]) - cpu[i]), bound[i]) << "at " << i;
}

TEST(GroupKernel, ATileStagedAtAVariableOffsetReadsItOnTheEmulator) {
  // x[:, t] @ w over rows of x (n0, 12, 32), the step's offset s0 = 32 t a variable (as a size
  // template learns it) that only the stores staging x's tile read: the kernel takes it as a
  // parameter and reads each step's columns.
  const int64_t rows = 100, width = 384, kd = 32, n = 256;
  const UOpRef n0 = define_var("n0", 1, INT32_MAX), s0 = define_var("s0", 0, width - kd);
  const UOpRef i = range(n0, 0), j = range(const_int(dtypes::index, n), 1),
               kk = range(const_int(dtypes::index, kd), 2);
  auto buffer = [](int64_t slot) {
    return UOp::make(Op::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::global), {}, slot);
  };
  auto at = [](const UOpRef& buf, const UOpRef& offset) {
    return UOp::make(Op::INDEX, buf->dtype(), {buf, offset});
  };
  const UOpRef o = buffer(0), x = buffer(1), w = buffer(2);
  const UOpRef prod = UOp::make(Op::LOAD, dtypes::float32, {at(x, i * width + kk + s0)}) *
                      UOp::make(Op::LOAD, dtypes::float32, {at(w, kk * n + j)});
  const UOpRef sum =
      UOp::make(Op::REDUCE, dtypes::float32, {prod, kk}, static_cast<int64_t>(Op::ADD));
  const UOpRef ast = UOp::make(Op::SINK, dtypes::void_,
                               {UOp::make(Op::STORE, dtypes::void_, {at(o, i * n + j), sum})});
  const std::string emu = runtime::canonical_device("emu");
  const codegen::LoweredKernel k = codegen::lower(ast, runtime::device_target(emu));
  ASSERT_EQ(count(k, PG_OP_DEFINE_LOCAL), 2) << "the tile form";
  // Small integers: every product and partial sum is exact, in any order.
  std::vector<float> xs(static_cast<size_t>(rows * width)), ws(static_cast<size_t>(kd * n));
  for (size_t e = 0; e < xs.size(); ++e) xs[e] = static_cast<float>(int64_t(e * 7 % 9) - 4);
  for (size_t e = 0; e < ws.size(); ++e) ws[e] = static_cast<float>(int64_t(e * 5 % 7) - 3);
  const Device dev = runtime::device_handle(emu);
  const Program program = dev.load(dev.render(k.program()), k.program());
  Buffer ob = dev.alloc(rows * n * 4), xb = dev.alloc(xs.size() * 4), wb = dev.alloc(ws.size() * 4);
  dev.copy_in(xb, xs.data(), xs.size() * 4);
  dev.copy_in(wb, ws.data(), ws.size() * 4);
  for (const int64_t step : {1, 7}) {
    const std::unordered_map<std::string, int64_t> vars{{"n0", rows}, {"s0", step * kd}};
    LaunchArgs args;
    args.buffers = {&ob, &xb, &wb};
    for (const Var& v : k.vars) args.scalars.push_back(vars.at(v.name));
    args.global_size = k.launch_global(vars);
    args.local_size = k.local_size;
    dev.launch(program, args);
    dev.synchronize();
    std::vector<float> got(static_cast<size_t>(rows * n));
    dev.copy_out(got.data(), ob, got.size() * 4);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double want = 0;
        for (int64_t e = 0; e < kd; ++e) want += xs[r * width + step * kd + e] * ws[e * n + c];
        ASSERT_EQ(got[r * n + c], want) << "step " << step << " at " << r << ", " << c;
      }
  }
}

}  // namespace
}  // namespace polygrad
