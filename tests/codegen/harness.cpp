#include "harness.hpp"

#include <gtest/gtest.h>
#include <polygrad/registry.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace polygrad_test {

polygrad::Device& cpu() {
  static polygrad::Device d = polygrad::Registry::global().device("cpu");
  return d;
}

polygrad::codegen::Target cpu_target() {
  polygrad::codegen::Target t;
  t.caps = cpu().properties().caps;
  // The plans the tests expect are worked out for these caches (the AVX2 host's), whatever
  // this machine declares; KTilingFollowsTheDeclaredCaches varies them.
  t.caps.l1_cache_bytes = 32 << 10;
  t.caps.l2_cache_bytes = 512 << 10;
  return t;
}

int64_t f32_lanes(const polygrad::codegen::Target& target) {
  return std::min<int64_t>(target.caps.vector_width_bytes / 4,
                           int64_t{target.caps.max_vector_lanes});
}

UOpRef global(int64_t slot, DType t) {
  return UOp::make(Op::DEFINE_GLOBAL, t.ptr(polygrad::AddrSpace::global), {}, slot);
}
UOpRef idx(int64_t v) {
  return polygrad::const_int(dtypes::index, v);
}
UOpRef load(const UOpRef& buf, const UOpRef& offset) {
  UOpRef i = UOp::make(Op::INDEX, buf->dtype(), {buf, offset});
  return UOp::make(Op::LOAD, buf->dtype().base(), {i});
}
UOpRef store(const UOpRef& buf, const UOpRef& offset, const UOpRef& value) {
  UOpRef i = UOp::make(Op::INDEX, buf->dtype(), {buf, offset});
  return UOp::make(Op::STORE, dtypes::void_, {i, value});
}
UOpRef sink(std::initializer_list<UOpRef> stores) {
  return UOp::make(Op::SINK, dtypes::void_, stores);
}
UOpRef reduce(Op op, const UOpRef& value, std::initializer_list<UOpRef> ranges) {
  std::vector<UOpRef> srcs{value};
  srcs.insert(srcs.end(), ranges.begin(), ranges.end());
  return UOp::make(Op::REDUCE, value->dtype(), srcs, static_cast<int64_t>(op));
}

Compiled compile(const UOpRef& ast) {
  return compile(ast, cpu_target());
}

Compiled compile(const UOpRef& ast, const polygrad::codegen::Target& target) {
  Compiled c;
  c.kernel = polygrad::codegen::lower(ast, target);
  pg_kernel_program p = c.kernel.program();
  polygrad::Artifact art = cpu().render(p);
  c.source = art.text();
  if (std::getenv("POLYGRAD_CODEGEN_DUMP") != nullptr)
    std::fprintf(stderr, "%s\n", c.source.c_str());
  c.program = cpu().load(art, c.kernel.name);
  return c;
}

void run(const Compiled& k, std::vector<HostBuf>& bufs,
         const std::unordered_map<std::string, int64_t>& vars) {
  std::vector<polygrad::Buffer> dev;
  for (HostBuf& b : bufs) {
    dev.push_back(cpu().alloc(b.bytes.size()));
    if (!b.bytes.empty()) cpu().copy_in(dev.back(), b.bytes.data(), b.bytes.size());
  }
  polygrad::LaunchArgs args;
  for (const polygrad::Buffer& b : dev) args.buffers.push_back(&b);
  for (const polygrad::Var& v : k.kernel.vars) args.scalars.push_back(vars.at(v.name));
  args.global_size = k.kernel.launch_global(vars);
  args.local_size = k.kernel.local_size;
  cpu().launch(k.program, args);
  cpu().synchronize();
  for (size_t i = 0; i < bufs.size(); ++i)
    if (!bufs[i].bytes.empty()) cpu().copy_out(bufs[i].bytes.data(), dev[i], bufs[i].bytes.size());
}

void lower_and_run(const UOpRef& ast, std::vector<HostBuf>& bufs) {
  Compiled c = compile(ast);
  run(c, bufs);
}

std::vector<float> exact_ints(int64_t count, int64_t seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t x = 0; x < count; ++x) v[x] = static_cast<float>((x * 7 + seed) % 9 - 4);
  return v;
}

UOpRef mul_add_ast(int64_t n, bool in_place) {
  UOpRef r = polygrad::range(idx(n), 0);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef b = global(2, dtypes::float32), c = in_place ? o : global(3, dtypes::float32);
  return sink({store(o, r, load(a, r) * load(b, r) + load(c, r))});
}

void check_mul_add(int64_t n) {
  std::vector<float> va(n), vb(n), vc(n);
  for (int64_t i = 0; i < n; ++i) {
    va[i] = static_cast<float>(i % 7) - 3.0f;
    vb[i] = 0.5f * static_cast<float>(i % 5);
    vc[i] = static_cast<float>(i % 11);
  }
  std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(va), HostBuf::of(vb),
                            HostBuf::of(vc)};
  lower_and_run(mul_add_ast(n), bufs);
  std::vector<float> out = bufs[0].as<float>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], va[i] * vb[i] + vc[i]) << "n " << n << " element " << i;
}

constexpr double kLog2e = 1.4426950408889634;

UOpRef softmax_ast(int64_t n, int64_t m) {
  using polygrad::range;
  UOpRef i = range(idx(n), 0), j = range(idx(m), 1), k = range(idx(m), 2), k2 = range(idx(m), 3);
  UOpRef o = global(0, dtypes::float32), x = global(1, dtypes::float32);
  UOpRef c = polygrad::const_float(dtypes::float32, kLog2e);
  UOpRef mx = reduce(Op::MAX, load(x, i * m + k), {k});
  auto e = [&](const UOpRef& col) {
    return polygrad::alu(Op::EXP2, {(load(x, i * m + col) - mx) * c});
  };
  UOpRef sum = reduce(Op::ADD, e(k2), {k2});
  return sink({store(o, i * m + j, e(j) / sum)});
}

std::vector<double> softmax_ref(const std::vector<float>& x, int64_t n, int64_t m) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < n; ++r) {
    double mx = -INFINITY, s = 0;
    for (int64_t k = 0; k < m; ++k) mx = std::max(mx, double{x[r * m + k]});
    for (int64_t k = 0; k < m; ++k) s += std::exp(x[r * m + k] - mx);
    for (int64_t k = 0; k < m; ++k) out[r * m + k] = std::exp(x[r * m + k] - mx) / s;
  }
  return out;
}

}  // namespace polygrad_test
