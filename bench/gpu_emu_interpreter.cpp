// The gpu_emu plugin's speed: kernel programs built by hand, run through its C tables after
// dlopen, as the host runs them. Reports thread-instructions per second ("items_per_second":
// every instruction counted once per thread that runs it) and the kernel's time.
//   elementwise/cpu_shape   out = a * 2 + 1 over 16M floats as the host's CPU codegen writes it:
//                           65536 one-thread groups, each a loop of 64 float4 steps
//   elementwise/gpu_shape   the same in groups of 256 threads, one float4 per thread
//   matmul512/naive         C = A B, 512^3, a thread per output in 16 x 16 groups, k loop of 512
//   matmul512/local_tiles   the same with 16 x 16 tiles of A and B staged in local memory,
//                           two barriers per tile (so the race detector runs on every access)
// POLYGRAD_EMU_THREADS=<n> sets the plugin's `threads` option (default: its own, min(2, cores)).
#include <polygrad/plugin.h>
#include <polygrad/program_builder.hpp>
#include <polygrad/program_info.hpp>

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using polygrad::sdk::ProgramBuilder;
using Ref = ProgramBuilder::Ref;

class Emulator {
 public:
  Emulator() {
    void* lib = dlopen(POLYGRAD_GPU_EMU_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(dlerror());
    table_ = reinterpret_cast<pg_plugin_entry_fn>(dlsym(lib, PG_PLUGIN_ENTRY_NAME))();
    services_.struct_size = sizeof services_;
    services_.abi_major = PG_PLUGIN_ABI_MAJOR;
    services_.abi_minor = PG_PLUGIN_ABI_MINOR;
    services_.plugin_path = POLYGRAD_GPU_EMU_PATH;
    services_.get_option = [](void*, int32_t, const char* key) -> const char* {
      return std::string(key) == "threads" ? std::getenv("POLYGRAD_EMU_THREADS") : nullptr;
    };
    pg_error err{};
    check(table_->init(&services_, &state_, &err), err);
    check(table_->device_open(state_, 0, &device_, &err), err);
  }
  pg_buffer_t buffer(uint64_t bytes, float value) {
    pg_error err{};
    pg_buffer_t b = nullptr;
    check(table_->allocator->alloc(device_, bytes, &b, &err), err);
    std::vector<float> fill(bytes / 4, value);
    check(table_->allocator->copy_in(device_, b, 0, fill.data(), bytes, &err), err);
    return b;
  }
  pg_program_t load(ProgramBuilder& b) {
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
    const polygrad::sdk::ProgramInfo info(b.program(), PG_ARTIFACT_OTHER);
    pg_program_t p = nullptr;
    check(table_->loader->load_program(device_, sink.bytes.data(), sink.bytes.size(), &info.view(),
                                       &p, &err),
          err);
    return p;
  }
  void launch(pg_program_t p, const std::vector<pg_buffer_t>& buffers, const uint32_t global[3],
              const uint32_t local[3]) {
    pg_launch_args args{};
    args.struct_size = sizeof args;
    args.buffer_count = static_cast<uint32_t>(buffers.size());
    args.buffers = buffers.data();
    for (int d = 0; d < 3; ++d) {
      args.global_size[d] = global[d];
      args.local_size[d] = local[d];
    }
    pg_error err{};
    check(table_->loader->launch(device_, p, &args, &err), err);
  }

 private:
  static void check(pg_status s, const pg_error& err) {
    if (s != PG_OK) throw std::runtime_error(err.message);
  }
  const pg_plugin* table_ = nullptr;
  pg_host_services services_{};
  pg_plugin_state_t state_ = nullptr;
  pg_device_t device_ = nullptr;
};

Emulator& emulator() {
  static Emulator e;
  return e;
}

/// Instructions one thread runs: every RANGE bound is a constant and no thread diverges.
double thread_instructions(ProgramBuilder& b) {
  const pg_kernel_program& p = b.program();
  std::vector<double> repeat = {1};
  double total = 0;
  for (uint32_t i = 0; i < p.instruction_count; ++i) {
    const pg_instruction& in = p.instructions[i];
    total += repeat.back();
    if (in.op == PG_OP_RANGE)
      repeat.push_back(repeat.back() *
                       static_cast<double>(p.instructions[p.operands[in.src_start]].arg.i));
    if (in.op == PG_OP_END_RANGE) repeat.pop_back();
  }
  return total;
}

Ref i32(ProgramBuilder& b, int64_t v) {
  return b.const_i(PG_DTYPE_INT32, v);
}

void run(benchmark::State& state, ProgramBuilder& b, const std::vector<pg_buffer_t>& buffers,
         const uint32_t global[3], const uint32_t local[3]) {
  Emulator& emu = emulator();
  pg_program_t p = emu.load(b);
  const double threads =
      static_cast<double>(global[0]) * global[1] * global[2] * local[0] * local[1] * local[2];
  const double per_launch = thread_instructions(b) * threads;
  for (auto _ : state) emu.launch(p, buffers, global, local);
  state.SetItemsProcessed(static_cast<int64_t>(per_launch * state.iterations()));
}

constexpr uint32_t kElements = 1u << 24;

void elementwise(benchmark::State& state, bool gpu_shape) {
  ProgramBuilder b("axpy");
  const Ref out = b.param_buffer(0, PG_DTYPE_FLOAT32), a = b.param_buffer(1, PG_DTYPE_FLOAT32);
  const Ref two = b.const_f(PG_DTYPE_FLOAT32, 2.0, 4), one = b.const_f(PG_DTYPE_FLOAT32, 1.0, 4);
  auto body = [&](Ref at) {
    b.store(b.index(out, at), b.ternary(PG_OP_MULACC, b.load(b.index(a, at), 4), two, one));
  };
  uint32_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  if (gpu_shape) {
    body(b.binary(PG_OP_MUL, b.special(PG_SPECIAL_GLOBAL, 0), i32(b, 4)));
    global[0] = kElements / 4 / 256;
    local[0] = 256;
  } else {
    const Ref row = b.binary(PG_OP_MUL, b.special(PG_SPECIAL_GROUP, 0), i32(b, 256));
    const Ref k = b.range(i32(b, 64), 0);
    body(b.binary(PG_OP_ADD, row, b.binary(PG_OP_MUL, k, i32(b, 4))));
    b.end_range(k);
    global[0] = kElements / 256;
  }
  b.set_local_size(local[0], 1, 1);
  Emulator& emu = emulator();
  std::vector<pg_buffer_t> buffers = {emu.buffer(kElements * 4, 0), emu.buffer(kElements * 4, 1)};
  run(state, b, buffers, global, local);
}

constexpr int kN = 512, kTile = 16;

void matmul(benchmark::State& state, bool tiles) {
  ProgramBuilder b("matmul");
  const Ref c = b.param_buffer(0, PG_DTYPE_FLOAT32), a = b.param_buffer(1, PG_DTYPE_FLOAT32),
            bm = b.param_buffer(2, PG_DTYPE_FLOAT32);
  const Ref col = b.special(PG_SPECIAL_GLOBAL, 0), row = b.special(PG_SPECIAL_GLOBAL, 1);
  auto add = [&](Ref x, Ref y) { return b.binary(PG_OP_ADD, x, y); };
  auto mul = [&](Ref x, Ref y) { return b.binary(PG_OP_MUL, x, y); };
  const Ref acc = b.define_reg(PG_DTYPE_FLOAT32, 1);
  const Ref cell = b.index(acc, i32(b, 0));
  b.store(cell, b.const_f(PG_DTYPE_FLOAT32, 0.0));
  if (!tiles) {
    const Ref k = b.range(i32(b, kN), 0);
    const Ref x = b.load(b.index(a, add(mul(row, i32(b, kN)), k)));
    const Ref y = b.load(b.index(bm, add(mul(k, i32(b, kN)), col)));
    b.store(cell, b.ternary(PG_OP_MULACC, x, y, b.load(cell)));
    b.end_range(k);
  } else {
    const Ref tx = b.special(PG_SPECIAL_LOCAL, 0), ty = b.special(PG_SPECIAL_LOCAL, 1);
    const Ref ta = b.define_local(PG_DTYPE_FLOAT32, kTile * kTile),
              tb = b.define_local(PG_DTYPE_FLOAT32, kTile * kTile);
    const Ref mine = add(mul(ty, i32(b, kTile)), tx);
    const Ref t = b.range(i32(b, kN / kTile), 0);
    const Ref k0 = mul(t, i32(b, kTile));
    b.store(b.index(ta, mine), b.load(b.index(a, add(mul(row, i32(b, kN)), add(k0, tx)))));
    b.store(b.index(tb, mine), b.load(b.index(bm, add(mul(add(k0, ty), i32(b, kN)), col))));
    b.barrier();
    const Ref k = b.range(i32(b, kTile), 1);
    const Ref x = b.load(b.index(ta, add(mul(ty, i32(b, kTile)), k)));
    const Ref y = b.load(b.index(tb, add(mul(k, i32(b, kTile)), tx)));
    b.store(cell, b.ternary(PG_OP_MULACC, x, y, b.load(cell)));
    b.end_range(k);
    b.barrier();
    b.end_range(t);
  }
  b.store(b.index(c, add(mul(row, i32(b, kN)), col)), b.load(cell));
  b.set_local_size(kTile, kTile, 1);
  const uint32_t global[3] = {kN / kTile, kN / kTile, 1}, local[3] = {kTile, kTile, 1};
  Emulator& emu = emulator();
  std::vector<pg_buffer_t> buffers = {emu.buffer(kN * kN * 4, 0), emu.buffer(kN * kN * 4, 1),
                                      emu.buffer(kN * kN * 4, 0.5f)};
  run(state, b, buffers, global, local);
}

BENCHMARK_CAPTURE(elementwise, cpu_shape, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(elementwise, gpu_shape, true)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(matmul, naive, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(matmul, local_tiles, true)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
