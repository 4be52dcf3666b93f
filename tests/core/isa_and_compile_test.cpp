// SDK 1.3 at the host: kernel-ISA negotiation with a plugin at an older ISA, program metadata
// handed to load_program, and compiling for a plugin's target with no device open.
#include <polygrad/compile_target.hpp>
#include <polygrad/program_builder.hpp>
#include <polygrad/program_info.hpp>
#include <polygrad/stream.hpp>
#include <polygrad/tensor.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "test_support.hpp"

namespace polygrad_test {
namespace {

using ::testing::HasSubstr;

const std::string kIsa1Plugin = PG_TEST_ISA1_PLUGIN;
const std::string kCompilerPlugin = PG_TEST_COMPILER_PLUGIN;

/// out[i] = a[i] + b[i] (float32), one launch index per element.
polygrad::sdk::ProgramBuilder add_kernel(uint32_t isa = PG_KERNEL_ISA_VERSION) {
  polygrad::sdk::ProgramBuilder b("add_f32");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT32);
  auto y = b.param_buffer(2, PG_DTYPE_FLOAT32);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  b.store(b.index(out, i), b.binary(PG_OP_ADD, b.load(b.index(x, i)), b.load(b.index(y, i))));
  b.set_isa_version(isa);
  return b;
}

/// Runs `program` from `artifact` on `device` over 4 elements of {1,2,3,4} + {10,20,30,40}.
std::vector<float> run_add(const polygrad::Device& device, const polygrad::Artifact& artifact,
                           const pg_kernel_program& program) {
  const std::vector<float> x = {1, 2, 3, 4}, y = {10, 20, 30, 40};
  polygrad::Buffer out = device.alloc(16), bx = device.alloc(16), by = device.alloc(16);
  device.copy_in(bx, x.data(), 16);
  device.copy_in(by, y.data(), 16);
  polygrad::Program loaded = device.load(artifact, program);
  polygrad::LaunchArgs args;
  args.buffers = {&out, &bx, &by};
  args.global_size = {4, 1, 1};
  device.launch(loaded, args);
  device.synchronize();
  std::vector<float> result(4);
  device.copy_out(result.data(), out, 16);
  return result;
}

const std::vector<float> kSums = {11, 22, 33, 44};

TEST(IsaNegotiation, APluginAtIsa1GetsIsa1Programs) {
  polygrad::Registry registry(isolated({kIsa1Plugin, kTestPlugin}));
  polygrad::Device old_device = registry.device("isaone");
  polygrad::Device new_device = registry.device("testdev");
  EXPECT_EQ(old_device.isa_version(), 1u);
  EXPECT_EQ(new_device.isa_version(), uint32_t{PG_KERNEL_ISA_VERSION});
  for (const auto& p : registry.plugins())
    if (p.name == "test_isa1") {
      EXPECT_EQ(p.isa_version, 1u);
    }

  // An ISA 1 program runs on both: a host at ISA 2 keeps running programs built at ISA 1.
  polygrad::sdk::ProgramBuilder v1 = add_kernel(1);
  EXPECT_EQ(run_add(old_device, old_device.render(v1.program()), v1.program()), kSums);
  EXPECT_EQ(run_add(new_device, new_device.render(v1.program()), v1.program()), kSums);

  // A program at ISA 2 is refused for the ISA 1 device before the plugin sees it.
  polygrad::sdk::ProgramBuilder v2 = add_kernel(2);
  EXPECT_EQ(error_of([&] { old_device.render(v2.program()); }),
            "[render 'add_f32'] isaone:0 (plugin test_isa1): the program is kernel ISA 2; the "
            "device takes ISA 1 at most");
  // An ISA 2 op is named as one the plugin's ISA lacks.
  polygrad::sdk::ProgramBuilder atomic("atomic_f32");
  auto out = atomic.param_buffer(0, PG_DTYPE_FLOAT32);
  atomic.emit(PG_OP_ATOMIC_ADD, PG_DTYPE_FLOAT32,
              {atomic.index(out, atomic.special(PG_SPECIAL_GLOBAL, 0)),
               atomic.const_f(PG_DTYPE_FLOAT32, 1.0)});
  atomic.set_isa_version(1);
  EXPECT_THAT(error_of([&] { old_device.render(atomic.program()); }),
              HasSubstr("instruction 4: the device does not support ATOMIC_ADD on float32 "
                        "(ATOMIC_ADD is kernel ISA 2; the plugin renders ISA 1)"));
}

TEST(IsaNegotiation, TensorsComputeOnAPluginAtIsa1) {
  // The host's codegen writes ISA 1 programs for it; the plugin's check_program refuses any
  // program above its ISA, and its load_program checks the metadata against the program.
  polygrad::Registry::global().load(kIsa1Plugin);
  polygrad::Tensor a(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "isaone");
  polygrad::Tensor b(std::vector<float>{0.5f, -1, 2}, {3}, "isaone");
  polygrad::Tensor c = ((a + b) * 2.0).sum(1);
  EXPECT_EQ(c.device(), "isaone:0");
  // Row sums of 2 * (a + b): 2 * (1.5 + 1 + 5) and 2 * (4.5 + 4 + 8).
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{15, 33}));
  polygrad::Tensor m =
      a.matmul(polygrad::Tensor(std::vector<float>{1, 0, 1, 1, 0, 2}, {3, 2}, "isaone"));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{3, 8, 9, 17}));
}

TEST(OlderPlugins, APluginBuiltAgainstSdk12LoadsAndRuns) {
  // Its pg_plugin ends before `compiler` and its loader before `load_program`; the slots past
  // them would crash if the host used them.
  polygrad::Registry::global().load(PG_TEST_ABI12_PLUGIN);
  polygrad::Registry& registry = polygrad::Registry::global();
  bool found = false;
  for (const polygrad::PluginInfo& p : registry.plugins()) {
    if (p.name != "test_abi12") continue;
    found = true;
    EXPECT_EQ(p.abi_minor, 2u);
    EXPECT_EQ(p.isa_version, 1u);
    EXPECT_FALSE(p.has_compiler);
    EXPECT_FALSE(p.has_async);
  }
  ASSERT_TRUE(found);
  polygrad::Device old = registry.device("abitwelve");
  EXPECT_EQ(old.isa_version(), 1u);
  EXPECT_FALSE(old.has_async());
  EXPECT_THAT(error_of([&] { registry.compile_target("test_abi12"); }),
              HasSubstr("plugin test_abi12 (ABI 1.2) cannot compile without a device"));
  polygrad::Tensor a(std::vector<float>{1, 2, 3, 4}, {2, 2}, "abitwelve");
  EXPECT_EQ((a * a + 1.0).sum(1).to_vector<float>(), (std::vector<float>{7, 27}));
  polygrad::Stream s = old.create_stream();  // no async table: each item runs at once
  EXPECT_FALSE(s.asynchronous());
}

TEST(ProgramMetadata, DerivedFromTheProgram) {
  // out (slot 0) is written, x (1) read, acc (2) read and written, one int32 scalar.
  polygrad::sdk::ProgramBuilder b("meta");
  auto out = b.param_buffer(0, PG_DTYPE_FLOAT32);
  auto x = b.param_buffer(1, PG_DTYPE_FLOAT16);
  auto acc = b.param_buffer(2, PG_DTYPE_INT64);
  auto n = b.param_scalar(0, PG_DTYPE_INT32);
  auto local = b.define_local(PG_DTYPE_FLOAT32, 64);
  auto i = b.special(PG_SPECIAL_GLOBAL, 0);
  auto v = b.cast(PG_OP_CAST, PG_DTYPE_FLOAT32, b.load(b.index(x, i)));
  b.store(b.index(local, i), v);
  b.store(b.index(out, i), b.load(b.index(local, i)));
  auto a = b.index(acc, n);
  b.store(a, b.binary(PG_OP_ADD, b.load(a), b.const_i(PG_DTYPE_INT64, 1)));
  b.set_local_size(64, 1, 1);
  const polygrad::sdk::ProgramInfo info(b.program(), PG_ARTIFACT_C_SOURCE);
  const pg_program_info& view = info.view();
  EXPECT_STREQ(view.entry, "meta");
  EXPECT_EQ(view.isa_version, uint32_t{PG_KERNEL_ISA_VERSION});
  EXPECT_EQ(view.artifact_format, uint32_t{PG_ARTIFACT_C_SOURCE});
  EXPECT_EQ(view.static_local_bytes, 64u * 4u);
  EXPECT_EQ(view.required_local_size[0], 64u);
  ASSERT_EQ(view.param_count, 4u);
  auto check = [&](uint32_t k, uint32_t kind, uint32_t slot, uint32_t dtype, uint32_t access) {
    EXPECT_EQ(view.params[k].kind, kind) << k;
    EXPECT_EQ(view.params[k].slot, slot) << k;
    EXPECT_EQ(view.params[k].dtype, dtype) << k;
    EXPECT_EQ(view.params[k].access, access) << k;
  };
  check(0, PG_PARAM_BUFFER, 0, PG_DTYPE_FLOAT32, PG_ACCESS_WRITE);
  check(1, PG_PARAM_BUFFER, 1, PG_DTYPE_FLOAT16, PG_ACCESS_READ);
  check(2, PG_PARAM_BUFFER, 2, PG_DTYPE_INT64, PG_ACCESS_READ | PG_ACCESS_WRITE);
  check(3, PG_PARAM_SCALAR, 0, PG_DTYPE_INT32, 0u);
}

TEST(CompileOnly, APluginWithZeroDevicesCompiles) {
  polygrad::Registry registry(isolated({kCompilerPlugin, kTestPlugin}));
  for (const std::string& name : registry.device_names())
    EXPECT_EQ(name.rfind("compileonly", 0), std::string::npos) << name;
  polygrad::CompileTarget target = registry.compile_target("test_compiler");
  EXPECT_EQ(target.plugin_name(), "test_compiler");
  EXPECT_EQ(target.arch(), "interpreter");
  EXPECT_TRUE((target.caps().dtype_mask >> PG_DTYPE_FLOAT32) & 1u);
  EXPECT_EQ(registry.compile_target("compileonly").arch(), "interpreter");  // by device prefix
  polygrad::sdk::ProgramBuilder b = add_kernel();
  polygrad::Artifact artifact = target.render(b.program());
  EXPECT_FALSE(artifact.bytes.empty());
  // test_host shares the interpreter's artifact format: what was compiled with no device runs
  // where there is one.
  EXPECT_EQ(run_add(registry.device("testdev"), artifact, b.program()), kSums);

  EXPECT_FALSE(target.can_compile());
  EXPECT_EQ(error_of([&] { target.compile(artifact, b.program()); }),
            "[compile 'add_f32' for interpreter] (plugin test_compiler): the plugin does not "
            "compile without a device (no compiler->compile)");
  EXPECT_EQ(error_of([&] { registry.compile_target("test_compiler", "sm_90"); }),
            "[describe_target 'sm_90'] test_compiler (plugin test_compiler): PG_ERR_UNSUPPORTED: "
            "test_compiler compiles for 'interpreter' only, not 'sm_90'");
  EXPECT_THAT(error_of([&] { registry.compile_target("test_host"); }),
              HasSubstr("cannot compile without a device: it has no compiler role (SDK 1.3)"));
  EXPECT_THAT(error_of([&] { registry.compile_target("nothing"); }),
              HasSubstr("no loaded plugin named 'nothing' (loaded: "));
}

#ifdef PG_CPU_CLANG
TEST(CompileOnly, CpuClangCompilesObjectCodeThatItsDeviceLoads) {
  polygrad::Registry registry(isolated({PG_CPU_CLANG}));
  polygrad::CompileTarget target = registry.compile_target("cpu_clang");
  polygrad::Device cpu = registry.device("cpu");
  EXPECT_EQ(target.arch(), cpu.properties().target);
  ASSERT_TRUE(target.can_compile());
  polygrad::sdk::ProgramBuilder b = add_kernel();
  polygrad::Artifact source = target.render(b.program());
  EXPECT_EQ(source.format, PG_ARTIFACT_C_SOURCE);
  EXPECT_THAT(source.text(), HasSubstr("add_f32"));
  polygrad::Artifact object = target.compile(source, b.program());
  EXPECT_EQ(object.format, PG_ARTIFACT_OBJECT);
  ASSERT_GE(object.bytes.size(), 4u);
  EXPECT_EQ(std::memcmp(object.bytes.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  EXPECT_EQ(run_add(cpu, object, b.program()), kSums);
  EXPECT_THAT(error_of([&] { registry.compile_target("cpu_clang", "sm_90"); }),
              HasSubstr("compiles for this machine's CPU"));
}
#endif

}  // namespace
}  // namespace polygrad_test
