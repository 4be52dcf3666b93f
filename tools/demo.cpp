// polygrad-demo: take the default device, build out = a * b + c over 1M float32 with the
// ProgramBuilder, render, load, launch, and check every value against a plain C++ loop.
// Exit status: 0 when every value matches, 1 on a mismatch, 2 when something fails to run.
#include <polygrad/program_builder.hpp>
#include <polygrad/registry.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

using polygrad::sdk::ProgramBuilder;

constexpr uint32_t kCount = 1u << 20;

/// out[i] = a[i] * b[i] + c[i]. Each launch index handles `chunk` consecutive elements.
ProgramBuilder build_kernel(uint32_t chunk) {
  ProgramBuilder b("madd_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto a = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(2, PG_DTYPE_FLOAT32);
  auto c = b.param_buffer(3, PG_DTYPE_FLOAT32);
  auto gid = b.special(PG_SPECIAL_GLOBAL, 0);
  auto body = [&](ProgramBuilder::Ref i) {
    auto prod = b.binary(PG_OP_MUL, b.load(b.index(a, i)), b.load(b.index(x, i)));
    b.store(b.index(out, i), b.binary(PG_OP_ADD, prod, b.load(b.index(c, i))));
  };
  if (chunk == 1) {
    body(gid);
  } else {
    auto size = b.const_i(PG_DTYPE_INT32, chunk);
    auto base = b.binary(PG_OP_MUL, gid, size);
    auto r = b.range(size, 0);
    body(b.binary(PG_OP_ADD, base, r));
    b.end_range(r);
  }
  return b;
}

int run() {
  polygrad::Registry& registry = polygrad::Registry::global();
  polygrad::Device device = registry.default_device();
  polygrad::DeviceProperties props = device.properties();
  std::printf("device %s (%s): %s, target %s, %u compute units, vector width %u bytes\n",
              device.name().c_str(), device.plugin_name().c_str(), props.name.c_str(),
              props.target.c_str(), props.caps.compute_units, props.caps.vector_width_bytes);
  if (!props.supports(PG_DTYPE_FLOAT32) || !props.supports(PG_DTYPE_INT32)) {
    std::fprintf(stderr, "polygrad-demo: %s does not support float32 and int32\n",
                 device.name().c_str());
    return 2;
  }

  // Devices with hardware groups get one element per thread; others a loop per launch index.
  polygrad::LaunchArgs args;
  uint32_t chunk = 4096;
  if (props.caps.flags & PG_CAP_GROUPS) {
    chunk = 1;
    args.local_size[0] = std::clamp<uint32_t>(props.caps.max_threads_per_group, 1, 256);
  }
  args.global_size[0] = kCount / chunk / args.local_size[0];

  std::vector<float> a(kCount), b(kCount), c(kCount), want(kCount), got(kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<float>(i % 1000) * 0.001f;
    b[i] = 1.5f - static_cast<float>(i % 7) * 0.25f;
    c[i] = static_cast<float>(i % 13) - 6.0f;
    want[i] = a[i] * b[i] + c[i];
  }

  ProgramBuilder builder = build_kernel(chunk);
  const pg_kernel_program& program = builder.program();
  polygrad::Artifact artifact = device.render(program);
  polygrad::Program loaded = device.load(artifact, program.name);

  const uint64_t bytes = uint64_t(kCount) * sizeof(float);
  polygrad::Buffer out = device.alloc(bytes), da = device.alloc(bytes), db = device.alloc(bytes),
                   dc = device.alloc(bytes);
  device.copy_in(da, a.data(), bytes);
  device.copy_in(db, b.data(), bytes);
  device.copy_in(dc, c.data(), bytes);
  args.buffers = {&out, &da, &db, &dc};

  // The first launch warms caches; the second is the one reported.
  device.launch(loaded, args);
  device.synchronize();
  double seconds = 0;
  if (device.has_launch_timed()) {
    seconds = device.launch_timed(loaded, args);
  } else {
    auto start = std::chrono::steady_clock::now();
    device.launch(loaded, args);
    device.synchronize();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  device.copy_out(got.data(), out, bytes);

  double max_error = 0;
  uint32_t bad = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    double err = std::fabs(double(got[i]) - double(want[i]));
    max_error = std::max(max_error, err);
    if (!(err <= 1e-6 * std::max(1.0, std::fabs(double(want[i]))))) {
      if (bad < 5)
        std::fprintf(stderr, "mismatch at %u: got %.9g, want %.9g\n", i, got[i], want[i]);
      ++bad;
    }
  }
  std::printf(
      "a*b+c over %u float32: artifact %zu bytes, launch %.3f ms (%.2f GB/s), "
      "max abs error %.3g\n",
      kCount, artifact.bytes.size(), seconds * 1e3, 4.0 * bytes / seconds / 1e9, max_error);
  if (bad != 0) {
    std::fprintf(stderr, "polygrad-demo: %u of %u values differ from the C++ reference\n", bad,
                 kCount);
    return 1;
  }
  std::printf("all %u values match the C++ reference\n", kCount);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "polygrad-demo: %s\n", e.what());
    return 2;
  }
}
