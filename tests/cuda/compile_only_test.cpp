// The cuda plugin's compiler role with no GPU: kernels the host lowers for sm_90 (flat,
// vectors, row reductions, float tiles, tensor cores, 16-bit floats, atomics) render as CUDA
// C++ and compile to a cubin for the architecture, and the target's capabilities are those
// the codegen plans for. Runs wherever the toolkit is, GPU or not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <polygrad/error.hpp>
#include <polygrad/registry.hpp>

#include <unistd.h>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "../codegen/harness.hpp"
#include "../core/isolated_registry.hpp"

namespace polygrad_test {
namespace {

using polygrad::range;
using polygrad::codegen::LoweredKernel;
using polygrad::codegen::Target;

/// A registry that sees the cuda plugin alone.
polygrad::Registry& registry() {
  static polygrad::Registry r(isolated({PG_TEST_CUDA_PLUGIN}));
  return r;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

Target cuda_target(const polygrad::CompileTarget& t) {
  Target target;
  target.caps = t.caps();
  target.isa_version = t.isa_version();
  target.device = "cuda:" + t.arch();
  return target;
}

struct Compiled {
  std::string source;
  std::string cubin;
};

/// The same with the plugin's disk cache off (every compile runs NVRTC and nvJitLink), through
/// a config file removed at exit (the registry reads it when first asked).
polygrad::Registry& registry_without_cache() {
  struct Config {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("pg_cuda_nocache_" + std::to_string(::getpid()) + ".yaml");
    Config() { std::ofstream(path) << "devices:\n  cuda:\n    cache: false\n"; }
    ~Config() { std::filesystem::remove(path); }
  };
  static const Config config;
  static polygrad::Registry r(isolated({PG_TEST_CUDA_PLUGIN}, config.path.string()));
  return r;
}

Compiled compile(const UOpRef& ast, const std::string& arch = "sm_90",
                 polygrad::Registry& reg = registry()) {
  polygrad::CompileTarget t = reg.compile_target("cuda", arch);
  const LoweredKernel k = polygrad::codegen::lower(ast, cuda_target(t));
  const pg_kernel_program p = k.program();
  polygrad::Artifact source = t.render(p);
  EXPECT_EQ(source.format, PG_ARTIFACT_CUDA_SOURCE);
  polygrad::Artifact binary = t.compile(source, p);
  EXPECT_EQ(binary.format, PG_ARTIFACT_OBJECT);
  return {source.text(), std::string(binary.bytes.begin(), binary.bytes.end())};
}

/// An ELF64 file for the CUDA machine (EM_CUDA = 190) that names `entry`.
void expect_cubin(const std::string& cubin, const std::string& entry) {
  ASSERT_GT(cubin.size(), 64u);
  EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f"
                                            "ELF"));
  EXPECT_EQ(cubin[4], 2) << "64-bit";
  uint16_t machine = 0;
  std::memcpy(&machine, cubin.data() + 18, 2);
  EXPECT_EQ(machine, 190);
  EXPECT_NE(cubin.find(entry), std::string::npos);
}

TEST(CudaCompileOnly, TargetDescribesHopper) {
  polygrad::CompileTarget t = registry().compile_target("cuda");
  EXPECT_EQ(t.arch(), "sm_90");
  const pg_capabilities& c = t.caps();
  EXPECT_TRUE(c.flags & PG_CAP_GROUPS);
  EXPECT_TRUE(c.flags & PG_CAP_ALIGNED_VECTORS);
  EXPECT_FALSE(c.flags & PG_CAP_HOST_MEMORY);
  EXPECT_EQ(c.subgroup_size, 32u);
  EXPECT_EQ(c.max_threads_per_group, 1024u);
  EXPECT_EQ(c.tensor_core_count, 2u);  // mma.sync m16n8k16 f16 and bf16
  EXPECT_EQ(c.tensor_cores[0].dtype_a, PG_DTYPE_FLOAT16);
  EXPECT_EQ(c.tensor_cores[1].dtype_a, PG_DTYPE_BFLOAT16);
  EXPECT_EQ(registry().compile_target("cuda", "sm_75").caps().tensor_core_count, 0u);
}

TEST(CudaCompileOnly, UnknownArchitecturesAreRefusedByName) {
  EXPECT_THAT(error_of([&] { registry().compile_target("cuda", "gfx90a"); }),
              ::testing::HasSubstr("'gfx90a' is not of the form sm_XY"));
  EXPECT_THAT(error_of([&] { registry().compile_target("cuda", "sm_50"); }),
              ::testing::HasSubstr("older than CUDA 13 compiles for"));
}

TEST(CudaCompileOnly, VectorisedElementwise) {
  UOpRef i = range(idx(64), 0), j = range(idx(1024), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i * 1024 + j, load(a, i * 1024 + j) * load(a, i * 1024 + j))});
  const Compiled c = compile(ast);
  EXPECT_NE(c.source.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_NE(c.source.find("*(const pg_floatx4*)"), std::string::npos) << c.source;
  expect_cubin(c.cubin, "E_64_1024");
}

TEST(CudaCompileOnly, RowReductionWithSharedMemoryTree) {
  UOpRef i = range(idx(64), 0), kk = range(idx(4096), 1);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
  UOpRef ast = sink({store(o, i, reduce(Op::ADD, load(a, i * 4096 + kk), {kk}))});
  const Compiled c = compile(ast);
  EXPECT_NE(c.source.find("__shared__"), std::string::npos);
  EXPECT_NE(c.source.find("__syncthreads()"), std::string::npos);
  expect_cubin(c.cubin, "r_64");
}

TEST(CudaCompileOnly, FloatMatmulTiles) {
  const int64_t n = 256;
  UOpRef i = range(idx(n), 0), j = range(idx(n), 1), kk = range(idx(n), 2);
  UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32),
         b = global(2, dtypes::float32);
  UOpRef ast =
      sink({store(o, i * n + j, reduce(Op::ADD, load(a, i * n + kk) * load(b, kk * n + j), {kk}))});
  const Compiled c = compile(ast);
  EXPECT_NE(c.source.find("__launch_bounds__(256)"), std::string::npos);
  expect_cubin(c.cubin, "r_256_256");
}

TEST(CudaCompileOnly, HalfAndBfloatMatmulsUseMmaSync) {
  const int64_t m = 128, n = 128, kd = 64;
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    UOpRef i = range(idx(m), 0), j = range(idx(n), 1), kk = range(idx(kd), 2);
    UOpRef o = global(0, dt), a = global(1, dt), b = global(2, dt);
    UOpRef prod = polygrad::cast(load(a, i * kd + kk) * load(b, kk * n + j), dtypes::float32);
    UOpRef ast = sink({store(o, i * n + j, polygrad::cast(reduce(Op::ADD, prod, {kk}), dt))});
    const Compiled c = compile(ast);
    const std::string shape = std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
                              (dt == dtypes::float16 ? "f16.f16" : "bf16.bf16");
    EXPECT_NE(c.source.find(shape), std::string::npos) << c.source;
    // The fragments are the staged bits as they were loaded, two lanes a register: no
    // conversion to float and back (pg_pack_*x2 packs floats).
    EXPECT_EQ(c.source.find("pg_pack_"), std::string::npos) << c.source;
    // The loop over staged slices stays rolled; the others keep the dialect's unroll by 4.
    EXPECT_NE(c.source.find("#pragma unroll 1\n"), std::string::npos) << c.source;
    expect_cubin(c.cubin, "r_128_128");
    // sm_75 has no such tensor core: the same product compiles as float tiles.
    const Compiled old = compile(ast, "sm_75");
    EXPECT_EQ(old.source.find("mma.sync"), std::string::npos);
    expect_cubin(old.cubin, "r_128_128");
  }
}

TEST(CudaCompileOnly, HalvesMovedAsTheyAreStayBits) {
  // o[i] = i < 100 ? a[i] : 0 in float16 and bfloat16: loaded, selected and stored as 16-bit
  // words, with no conversion to float and back (each a dozen instructions for a NaN's sake).
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    UOpRef i = range(idx(256), 0);
    UOpRef o = global(0, dt), a = global(1, dt);
    UOpRef zero = polygrad::const_float(dt, 0.0);
    UOpRef ast = sink({store(o, i, polygrad::where(polygrad::lt(i, idx(100)), load(a, i), zero))});
    const Compiled c = compile(ast);
    const std::string name = dt == dtypes::float16 ? "f16" : "bf16";
    EXPECT_EQ(c.source.find("pg_f32_to_" + name), std::string::npos) << c.source;
    EXPECT_EQ(c.source.find("pg_" + name + "_to_f32"), std::string::npos) << c.source;
    expect_cubin(c.cubin, "E_256");
  }
}

TEST(CudaCompileOnly, AKernelOnEveryDtypeCompiles) {
  for (DType dt : {dtypes::bool_, dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64,
                   dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::float16,
                   dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
    UOpRef i = range(idx(1000), 0);
    UOpRef o = global(0, dtypes::float32), a = global(1, dt);
    UOpRef ast = sink({store(o, i, polygrad::cast(load(a, i), dtypes::float32))});
    expect_cubin(compile(ast).cubin, "E_1000");
  }
}

// The plugin declares concurrent loads (the host builds a schedule's kernels side by side): its
// compiler (NVRTC and nvJitLink, which the loader and this role share; the disk cache off, so
// that each compile runs them) gives the same cubins from three threads at once as one at a
// time, for six kernels.
TEST(CudaCompileOnly, CompilesFromSeveralThreadsAtOnce) {
  std::vector<UOpRef> asts;
  for (int k = 0; k < 6; ++k) {
    UOpRef i = range(idx(4096), 0);
    UOpRef o = global(0, dtypes::float32), a = global(1, dtypes::float32);
    asts.push_back(
        sink({store(o, i, load(a, i) * polygrad::const_float(dtypes::float32, 1.5 + k))}));
  }
  polygrad::Registry& reg = registry_without_cache();
  std::vector<std::string> serial;
  for (const UOpRef& ast : asts) serial.push_back(compile(ast, "sm_90", reg).cubin);
  std::vector<std::string> parallel(asts.size());
  std::atomic<int> waiting{3};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      waiting.fetch_sub(1);
      while (waiting.load() > 0) std::this_thread::yield();  // all start together
      for (size_t k = static_cast<size_t>(t); k < asts.size(); k += 3)
        parallel[k] = compile(asts[k], "sm_90", reg).cubin;
    });
  for (std::thread& t : threads) t.join();
  for (size_t k = 0; k < asts.size(); ++k) {
    expect_cubin(parallel[k], "E_4096");
    EXPECT_EQ(parallel[k], serial[k]) << "kernel " << k;
  }
}

// The plugin opens NVRTC and nvJitLink only through libpolygrad_cuda_compiler.so, beside it, at
// the first compile: without that file it still loads, describes targets and renders, and a
// compile fails with an error that names the file.
TEST(CudaCompileOnly, MissingCompilerLibraryIsNamedAtCompile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("pg_cuda_alone_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path plugin = dir / fs::path(PG_TEST_CUDA_PLUGIN).filename();
  fs::copy_file(PG_TEST_CUDA_PLUGIN, plugin);
  ASSERT_TRUE(
      fs::exists(fs::path(PG_TEST_CUDA_PLUGIN).parent_path() / "libpolygrad_cuda_compiler.so"));
  {
    polygrad::RegistryOptions o;
    o.plugin_paths = {plugin.string()};
    o.use_env = false;
    o.use_libdir = false;
    o.use_build_tree = false;
    o.search_config = false;
    polygrad::Registry alone(o);
    polygrad::CompileTarget t = alone.compile_target("cuda", "sm_90");
    UOpRef i = range(idx(256), 0);
    UOpRef a = global(1, dtypes::float32);
    UOpRef ast = sink({store(global(0, dtypes::float32), i, load(a, i) * load(a, i))});
    const LoweredKernel k = polygrad::codegen::lower(ast, cuda_target(t));
    const pg_kernel_program p = k.program();
    polygrad::Artifact source = t.render(p);
    EXPECT_NE(source.text().find("__global__"), std::string::npos);
    const std::string error = error_of([&] { t.compile(source, p); });
    EXPECT_THAT(error, ::testing::HasSubstr("cannot load " +
                                            (dir / "libpolygrad_cuda_compiler.so").string()));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace polygrad_test
