#include "harness.hpp"

#include <polygrad/program_info.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace polygrad::test {

namespace {

const pg_plugin* plugin_table() {
  // Loaded once, like the host does: RTLD_NOW | RTLD_LOCAL, never closed.
  static const pg_plugin* table = [] {
    void* lib = dlopen(POLYGRAD_CPU_CLANG_PATH, RTLD_NOW | RTLD_LOCAL);
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

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && base[0] ? base : "/tmp") + "/pg_cpu_clang_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::files() const {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path_))
    if (e.is_regular_file()) out.push_back(e.path().string());
  return out;
}

Plugin::Plugin(std::map<std::string, std::string> options) : options_(std::move(options)) {
  table_ = plugin_table();
  if (table_ == nullptr) throw std::runtime_error("entry returned NULL");
  services_.struct_size = sizeof(services_);
  services_.abi_major = PG_PLUGIN_ABI_MAJOR;
  services_.abi_minor = PG_PLUGIN_ABI_MINOR;
  services_.host_context = this;
  services_.log = &log_thunk;
  services_.get_option = &option_thunk;
  services_.plugin_path = POLYGRAD_CPU_CLANG_PATH;
  pg_error err{};
  check(table_->init(&services_, &state_, &err), err, "init");
  check(table_->device_open(state_, 0, &device_, &err), err, "device_open");
}

Plugin::~Plugin() {
  for (pg_buffer_t b : buffers_) table_->allocator->free(device_, b);
  if (table_ && table_->shutdown && state_) table_->shutdown(state_);
}

void Plugin::log_thunk(void* ctx, pg_log_level level, const char* message) {
  static_cast<Plugin*>(ctx)->logs_.emplace_back(level, message);
}

const char* Plugin::option_thunk(void* ctx, int32_t, const char* key) {
  auto& options = static_cast<Plugin*>(ctx)->options_;
  auto it = options.find(key);
  return it == options.end() ? nullptr : it->second.c_str();
}

bool Plugin::logged(pg_log_level level, const std::string& needle) const {
  for (const auto& [l, m] : logs_)
    if (l == level && m.find(needle) != std::string::npos) return true;
  return false;
}

pg_buffer_t Plugin::alloc(uint64_t nbytes) {
  pg_error err{};
  pg_buffer_t b = nullptr;
  check(table_->allocator->alloc(device_, nbytes, &b, &err), err, "alloc");
  buffers_.push_back(b);
  return b;
}

void Plugin::free(pg_buffer_t b) {
  buffers_.erase(std::remove(buffers_.begin(), buffers_.end(), b), buffers_.end());
  table_->allocator->free(device_, b);
}

void Plugin::copy_in(pg_buffer_t b, const void* src, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_in(device_, b, 0, src, n, &err), err, "copy_in");
}

void Plugin::copy_out(void* dst, pg_buffer_t b, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_out(device_, dst, b, 0, n, &err), err, "copy_out");
}

pg_status Plugin::render(sdk::ProgramBuilder& builder, std::string& source, std::string& error) {
  pg_byte_sink sink{&source, [](void* ctx, const void* data, uint64_t n) {
                      static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), n);
                      return 0;
                    }};
  pg_error err{};
  pg_status s = table_->renderer->render(device_, &builder.program(), &sink, &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

pg_status Plugin::load_source(const std::string& source, const std::string& entry,
                              pg_program_t& out, std::string& error) {
  pg_error err{};
  out = nullptr;
  pg_status s =
      table_->loader->load(device_, source.data(), source.size(), entry.c_str(), &out, &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

pg_program_t Plugin::build(sdk::ProgramBuilder& builder) {
  std::string source, error;
  if (render(builder, source, error) != PG_OK) throw std::runtime_error("render: " + error);
  // With the program's metadata, as the host loads it (ABI 1.3).
  const sdk::ProgramInfo info(builder.program(), PG_ARTIFACT_C_SOURCE);
  pg_error err{};
  pg_program_t p = nullptr;
  if (table_->loader->load_program(device_, source.data(), source.size(), &info.view(), &p, &err) !=
      PG_OK)
    throw std::runtime_error(std::string("load: ") + err.message + "\n--- source ---\n" + source);
  return p;
}

void Plugin::unload(pg_program_t p) {
  table_->loader->unload(device_, p);
}

pg_status Plugin::launch(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
                         const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global,
                         std::array<uint32_t, 3> local, std::string& error) {
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
  pg_error err{};
  pg_status s = table_->loader->launch(device_, p, &args, &err);
  if (s == PG_OK) s = table_->loader->synchronize(device_, &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

void Plugin::run(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
                 const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global) {
  std::string error;
  if (launch(p, buffers, scalars, global, {1, 1, 1}, error) != PG_OK)
    throw std::runtime_error("launch: " + error);
}

void Plugin::run_once(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                      const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global) {
  pg_program_t p = build(builder);
  std::string error;
  pg_status s = launch(p, buffers, scalars, global, {1, 1, 1}, error);
  unload(p);
  if (s != PG_OK) throw std::runtime_error("launch: " + error);
}

}  // namespace polygrad::test
