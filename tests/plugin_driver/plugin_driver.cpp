#include "plugin_driver.hpp"

#include <polygrad/program_info.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <stdexcept>

namespace polygrad::test {

namespace {

const pg_plugin* plugin_table(const std::string& path) {
  // Loaded once per path, like the host does: RTLD_NOW | RTLD_LOCAL, never closed.
  static std::map<std::string, const pg_plugin*> tables;
  if (auto it = tables.find(path); it != tables.end()) return it->second;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto entry = reinterpret_cast<pg_plugin_entry_fn>(dlsym(lib, PG_PLUGIN_ENTRY_NAME));
  if (entry == nullptr) throw std::runtime_error("no entry symbol");
  return tables[path] = entry();
}

void check(pg_status status, const pg_error& err, const char* what) {
  if (status != PG_OK) throw std::runtime_error(std::string(what) + ": " + err.message);
}

}  // namespace

PluginDriver::PluginDriver(std::string path, pg_artifact_format format, Options options)
    : path_(std::move(path)), format_(format), options_(std::move(options)) {
  table_ = plugin_table(path_);
  if (table_ == nullptr) throw std::runtime_error("entry returned NULL");
  services_.struct_size = sizeof(services_);
  services_.abi_major = PG_PLUGIN_ABI_MAJOR;
  services_.abi_minor = PG_PLUGIN_ABI_MINOR;
  services_.host_context = this;
  services_.log = &log_thunk;
  services_.get_option = &option_thunk;
  services_.plugin_path = path_.c_str();
  pg_error err{};
  check(table_->init(&services_, &state_, &err), err, "init");
  check(table_->device_open(state_, 0, &device_, &err), err, "device_open");
  properties_.struct_size = sizeof(properties_);
  properties_.caps.struct_size = sizeof(properties_.caps);
  check(table_->device_properties(device_, &properties_, &err), err, "device_properties");
}

PluginDriver::~PluginDriver() {
  for (pg_buffer_t b : buffers_) table_->allocator->free(device_, b);
  if (table_ && table_->shutdown && state_) table_->shutdown(state_);
}

void PluginDriver::log_thunk(void* ctx, pg_log_level level, const char* message) {
  static_cast<PluginDriver*>(ctx)->logs_.emplace_back(level, message);
}

const char* PluginDriver::option_thunk(void* ctx, int32_t, const char* key) {
  auto& options = static_cast<PluginDriver*>(ctx)->options_;
  auto it = options.find(key);
  return it == options.end() ? nullptr : it->second.c_str();
}

bool PluginDriver::logged(pg_log_level level, const std::string& needle) const {
  for (const auto& [l, m] : logs_)
    if (l == level && m.find(needle) != std::string::npos) return true;
  return false;
}

pg_buffer_t PluginDriver::alloc(uint64_t nbytes) {
  pg_error err{};
  pg_buffer_t b = nullptr;
  check(table_->allocator->alloc(device_, nbytes, &b, &err), err, "alloc");
  buffers_.push_back(b);
  return b;
}

void PluginDriver::free(pg_buffer_t b) {
  buffers_.erase(std::remove(buffers_.begin(), buffers_.end(), b), buffers_.end());
  table_->allocator->free(device_, b);
}

void PluginDriver::copy_in(pg_buffer_t b, const void* src, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_in(device_, b, 0, src, n, &err), err, "copy_in");
}

void PluginDriver::copy_out(void* dst, pg_buffer_t b, uint64_t n) {
  pg_error err{};
  check(table_->allocator->copy_out(device_, dst, b, 0, n, &err), err, "copy_out");
}

pg_status PluginDriver::render(sdk::ProgramBuilder& builder, std::string& source,
                               std::string& error) {
  source.clear();
  pg_byte_sink sink{&source, [](void* ctx, const void* data, uint64_t n) {
                      static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), n);
                      return 0;
                    }};
  pg_error err{};
  pg_status s = table_->renderer->render(device_, &builder.program(), &sink, &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

pg_status PluginDriver::load_source(const std::string& source, const std::string& entry,
                                    pg_program_t& out, std::string& error) {
  pg_error err{};
  out = nullptr;
  pg_status s =
      table_->loader->load(device_, source.data(), source.size(), entry.c_str(), &out, &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

pg_status PluginDriver::load(sdk::ProgramBuilder& builder, pg_program_t& out, std::string& error) {
  out = nullptr;
  pg_status s = render(builder, artifact_, error);
  if (s != PG_OK) return s;
  const sdk::ProgramInfo info(builder.program(), format_);
  pg_error err{};
  s = table_->loader->load_program(device_, artifact_.data(), artifact_.size(), &info.view(), &out,
                                   &err);
  error = s == PG_OK ? "" : err.message;
  return s;
}

pg_program_t PluginDriver::build(sdk::ProgramBuilder& builder) {
  pg_program_t p = nullptr;
  std::string error;
  if (load(builder, p, error) != PG_OK)
    throw std::runtime_error("render or load: " + error + "\n--- artifact ---\n" + artifact_);
  return p;
}

void PluginDriver::unload(pg_program_t p) {
  table_->loader->unload(device_, p);
}

pg_status PluginDriver::launch(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
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

void PluginDriver::run(pg_program_t p, const std::vector<pg_buffer_t>& buffers,
                       const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global) {
  std::string error;
  if (launch(p, buffers, scalars, global, {1, 1, 1}, error) != PG_OK)
    throw std::runtime_error("launch: " + error);
}

void PluginDriver::run_once(sdk::ProgramBuilder& builder, const std::vector<pg_buffer_t>& buffers,
                            const std::vector<int64_t>& scalars, std::array<uint32_t, 3> global) {
  pg_program_t p = build(builder);
  std::string error;
  pg_status s = launch(p, buffers, scalars, global, {1, 1, 1}, error);
  unload(p);
  if (s != PG_OK) throw std::runtime_error("launch: " + error);
}

}  // namespace polygrad::test
