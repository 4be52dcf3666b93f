#include "harness.hpp"

#include <polygrad/program_info.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace polygrad::test {

namespace {

const pg_plugin* plugin_table() {
  // Loaded once, like the host does: RTLD_NOW | RTLD_LOCAL, never closed.
  static const pg_plugin* table = [] {
    void* lib = dlopen(POLYGRAD_GPU_EMU_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
    auto entry = reinterpret_cast<pg_plugin_entry_fn>(dlsym(lib, PG_PLUGIN_ENTRY_NAME));
    if (entry == nullptr) throw std::runtime_error("no entry symbol");
    return entry();
  }();
  return table;
}

void check(pg_status status, const pg_error& err, const char* what) {
  if (status != PG_OK) throw std::runtime_error(std::string(what) + ": " + err.message);
}

struct Sink {
  std::string bytes;
  static int append(void* ctx, const void* data, uint64_t n) {
    static_cast<Sink*>(ctx)->bytes.append(static_cast<const char*>(data), n);
    return 0;
  }
};

}  // namespace

Emulator::Emulator(Options options) : options_(std::move(options)) {
  table_ = plugin_table();
  if (table_ == nullptr) throw std::runtime_error("entry returned NULL");
  services_.struct_size = sizeof(services_);
  services_.abi_major = PG_PLUGIN_ABI_MAJOR;
  services_.abi_minor = PG_PLUGIN_ABI_MINOR;
  services_.host_context = this;
  services_.get_option = &option_thunk;
  services_.plugin_path = POLYGRAD_GPU_EMU_PATH;
  pg_error err{};
  check(table_->init(&services_, &state_, &err), err, "init");
  check(table_->device_open(state_, 0, &device_, &err), err, "device_open");
  properties_.struct_size = sizeof(properties_);
  properties_.caps.struct_size = sizeof(properties_.caps);
  check(table_->device_properties(device_, &properties_, &err), err, "device_properties");
}

Emulator::~Emulator() {
  for (pg_buffer_t b : buffers_) table_->allocator->free(device_, b);
  if (table_->shutdown && state_) table_->shutdown(state_);
}

const char* Emulator::option_thunk(void* ctx, int32_t, const char* key) {
  auto& options = static_cast<Emulator*>(ctx)->options_;
  auto it = options.find(key);
  return it == options.end() ? nullptr : it->second.c_str();
}

pg_buffer_t Emulator::alloc(uint64_t nbytes) {
  pg_error err{};
  pg_buffer_t b = nullptr;
  check(table_->allocator->alloc(device_, nbytes, &b, &err), err, "alloc");
  buffers_.push_back(b);
  return b;
}

void Emulator::copy_in(pg_buffer_t b, const void* src, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_in(device_, b, 0, src, n, &err), err, "copy_in");
}

void Emulator::copy_out(void* dst, pg_buffer_t b, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_out(device_, dst, b, 0, n, &err), err, "copy_out");
}

Outcome Emulator::render(sdk::ProgramBuilder& builder, std::string& artifact) {
  Sink sink;
  pg_byte_sink out{&sink, &Sink::append};
  pg_error err{};
  Outcome o;
  o.status = table_->renderer->render(device_, &builder.program(), &out, &err);
  if (!o.ok()) o.error = err.message;
  artifact = sink.bytes;
  return o;
}

Outcome Emulator::run(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                      Dims global, Dims local, const std::vector<int64_t>& scalars) {
  std::string artifact;
  Outcome o = render(builder, artifact);
  if (!o.ok()) return o;
  const sdk::ProgramInfo info(builder.program(), PG_ARTIFACT_OTHER);
  pg_program_t program = nullptr;
  pg_error err{};
  o.status = table_->loader->load_program(device_, artifact.data(), artifact.size(), &info.view(),
                                          &program, &err);
  if (!o.ok()) {
    o.error = err.message;
    return o;
  }
  pg_launch_args args{};
  args.struct_size = sizeof(args);
  args.buffer_count = static_cast<uint32_t>(buffers.size());
  args.buffers = buffers.data();
  args.scalar_count = static_cast<uint32_t>(scalars.size());
  args.scalars = scalars.data();
  for (int d = 0; d < 3; ++d) {
    args.global_size[d] = global[d];
    args.local_size[d] = local[d];
  }
  o.status = table_->loader->launch(device_, program, &args, &err);
  if (o.ok()) o.status = table_->loader->synchronize(device_, &err);
  if (!o.ok()) o.error = err.message;
  table_->loader->unload(device_, program);
  return o;
}

void Emulator::run_ok(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                      Dims global, Dims local, const std::vector<int64_t>& scalars) {
  const Outcome o = run(builder, buffers, global, local, scalars);
  ASSERT_TRUE(o.ok()) << o.error;
}

}  // namespace polygrad::test
