// The wasm plugin's fixed costs, through its C tables after dlopen, as the host pays them:
//   render                 a*b+c in the host's CPU shape (rows of a loop of float4 steps)
//                          rendered to a module
//   load/<engine>          that module compiled and instantiated (load_program), then unloaded;
//                          a new module each time
//   launch/<engine>        a launch of a kernel that stores one float: the cost of a launch
//                          over the kernel's own work
// Engines: v8 and interp where the plugin has v8, else interp. The v8 engine compiles as
// $POLYGRAD_WASM_COMPILE says (the option `compile`: tiered, optimized), else the default
// (tiered: load/v8 is then Liftoff's compile on the loading thread).
#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>
#include <polygrad/program_info.hpp>

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using polygrad::sdk::ProgramBuilder;
using Ref = ProgramBuilder::Ref;

class WasmDevice {
 public:
  explicit WasmDevice(std::string engine) : engine_(std::move(engine)) {
    void* lib = dlopen(POLYGRAD_WASM_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(dlerror());
    table_ = reinterpret_cast<pg_plugin_entry_fn>(dlsym(lib, PG_PLUGIN_ENTRY_NAME))();
    services_.struct_size = sizeof services_;
    services_.abi_major = PG_PLUGIN_ABI_MAJOR;
    services_.abi_minor = PG_PLUGIN_ABI_MINOR;
    services_.plugin_path = POLYGRAD_WASM_PATH;
    services_.host_context = this;
    services_.get_option = [](void* self, int32_t, const char* key) -> const char* {
      if (std::string(key) == "engine") return static_cast<WasmDevice*>(self)->engine_.c_str();
      const char* compile = std::getenv("POLYGRAD_WASM_COMPILE");
      return std::string(key) == "compile" && compile != nullptr && *compile != '\0' ? compile
                                                                                     : nullptr;
    };
    pg_error err{};
    check(table_->init(&services_, &state_, &err), err);
    check(table_->device_open(state_, 0, &device_, &err), err);
  }
  pg_buffer_t buffer(uint64_t bytes) {
    pg_error err{};
    pg_buffer_t b = nullptr;
    check(table_->allocator->alloc(device_, bytes, &b, &err), err);
    return b;
  }
  std::string render(ProgramBuilder& b) {
    struct Sink {
      std::string bytes;
      static int append(void* c, const void* d, uint64_t n) {
        static_cast<Sink*>(c)->bytes.append(static_cast<const char*>(d), n);
        return 0;
      }
    } sink;
    pg_byte_sink out{&sink, &Sink::append};
    pg_error err{};
    check(table_->renderer->render(device_, &b.program(), &out, &err), err);
    return std::move(sink.bytes);
  }
  pg_program_t load(const std::string& module, ProgramBuilder& b) {
    const polygrad::sdk::ProgramInfo info(b.program(), PG_ARTIFACT_WASM);
    pg_program_t p = nullptr;
    pg_error err{};
    check(
        table_->loader->load_program(device_, module.data(), module.size(), &info.view(), &p, &err),
        err);
    return p;
  }
  void unload(pg_program_t p) { table_->loader->unload(device_, p); }
  void launch(pg_program_t p, const std::vector<pg_buffer_t>& buffers, uint32_t n) {
    pg_launch_args args{};
    args.struct_size = sizeof args;
    args.buffer_count = static_cast<uint32_t>(buffers.size());
    args.buffers = buffers.data();
    args.global_size[0] = n;
    args.global_size[1] = args.global_size[2] = 1;
    args.local_size[0] = args.local_size[1] = args.local_size[2] = 1;
    pg_error err{};
    check(table_->loader->launch(device_, p, &args, &err), err);
  }

 private:
  static void check(pg_status s, const pg_error& err) {
    if (s != PG_OK) throw std::runtime_error(err.message);
  }
  std::string engine_;
  const pg_plugin* table_ = nullptr;
  pg_host_services services_{};
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
};

WasmDevice& device(const std::string& engine) {
  static std::map<std::string, WasmDevice> devices;
  auto it = devices.find(engine);
  if (it == devices.end()) it = devices.try_emplace(engine, engine).first;
  return it->second;
}

Ref i32(ProgramBuilder& b, int64_t v) {
  return b.const_i(PG_DTYPE_INT32, v);
}

/// out = a * b + c, float32, a row of 256 elements per launch index as 64 float4 steps.
void axpb(ProgramBuilder& b) {
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32), a = b.param_buffer(1, PG_DTYPE_FLOAT32),
            x = b.param_buffer(2, PG_DTYPE_FLOAT32), c = b.param_buffer(3, PG_DTYPE_FLOAT32);
  const Ref row = b.binary(PG_OP_MUL, b.special(PG_SPECIAL_GLOBAL, 0), i32(b, 256));
  const Ref k = b.range(i32(b, 64), 0);
  const Ref at = b.binary(PG_OP_ADD, row, b.binary(PG_OP_MUL, k, i32(b, 4)));
  const Ref v = b.ternary(PG_OP_MULACC, b.load(b.index(a, at), 4), b.load(b.index(x, at), 4),
                          b.load(b.index(c, at), 4));
  b.store(b.index(out, at), v);
  b.end_range(k);
}

void render(benchmark::State& state) {
  WasmDevice& d = device("interp");
  for (auto _ : state) {
    ProgramBuilder b("axpb");
    axpb(b);
    benchmark::DoNotOptimize(d.render(b));
  }
}

void load(benchmark::State& state, const std::string& engine) {
  // A module of new bytes each time (its kernel's name differs): V8 reuses the code of a
  // module whose bytes it has compiled before.
  WasmDevice& d = device(engine);
  static int64_t serial = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ProgramBuilder b("axpb" + std::to_string(serial++));
    axpb(b);
    const std::string module = d.render(b);
    state.ResumeTiming();
    d.unload(d.load(module, b));
  }
}

void launch(benchmark::State& state, const std::string& engine) {
  WasmDevice& d = device(engine);
  ProgramBuilder b("one_store");
  b.store(b.index(b.param_buffer(0, PG_DTYPE_FLOAT32), i32(b, 0)),
          b.const_f(PG_DTYPE_FLOAT32, 1.0));
  pg_program_t p = d.load(d.render(b), b);
  std::vector<pg_buffer_t> buffers = {d.buffer(64)};
  for (auto _ : state) d.launch(p, buffers, 1);
  d.unload(p);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("render", render)->Unit(benchmark::kMicrosecond);
  std::vector<std::string> engines = {"interp"};
#if POLYGRAD_WASM_HAVE_V8
  engines.insert(engines.begin(), "v8");
#endif
  for (const std::string& e : engines) {
    benchmark::RegisterBenchmark(("load/" + e).c_str(), load, e)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("launch/" + e).c_str(), launch, e)->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
