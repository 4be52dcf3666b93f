// polygrad::Communicator: one rank of a group over a loaded ccl plugin, and the firewall around
// every call into the plugin.
#include "src/ccl/loaded_ccl.hpp"
#include "src/plugin/loaded_plugin.hpp"

namespace polygrad {
namespace detail {

void call_ccl(const LoadedCcl& plugin, const std::string& op, int rank,
              const std::function<pg_status(pg_error*)>& fn) {
  pg_error err;
  err.message[0] = '\0';
  pg_status status = PG_OK;
  const std::string where = "[" + op + "] ccl " + plugin.name + " rank " + std::to_string(rank);
  try {
    status = fn(&err);
  } catch (...) {
    throw Error(ErrorKind::internal,
                where + ": the plugin threw a C++ exception across the C boundary: " +
                    describe_current_exception(),
                PG_ERR_INTERNAL);
  }
  if (status == PG_OK) return;
  err.message[PG_ERROR_MESSAGE_MAX - 1] = '\0';
  throw Error(status == PG_ERR_INTERNAL ? ErrorKind::internal : ErrorKind::user,
              where + ": " + status_name(status) + ": " +
                  (err.message[0] ? err.message : "(the plugin gave no message)"),
              status);
}

LoadedCcl::~LoadedCcl() {
  if (state == nullptr || table->shutdown == nullptr) return;
  release_in_plugin("ccl_" + name, "shutdown", [&] { table->shutdown(state); });
}

CommunicatorState::~CommunicatorState() {
  if (comm == nullptr) return;
  release_in_plugin("ccl_" + plugin->name, "comm_destroy",
                    [&] { plugin->table->comm_destroy(comm); });
}

std::shared_ptr<CommunicatorState> make_communicator(std::shared_ptr<LoadedCcl> plugin,
                                                     const Bootstrap& b) {
  if (b.world_size < 1 || b.rank < 0 || b.rank >= b.world_size)
    user_error("[communicator] rank " + std::to_string(b.rank) + " is not in a world of size " +
               std::to_string(b.world_size));
  if (!plugin->usable)
    user_error("[communicator] ccl plugin " + plugin->name +
               " cannot make communicators in this process: " + plugin->unusable_reason);
  pg_ccl_bootstrap raw{};
  raw.struct_size = sizeof(raw);
  raw.rank = b.rank;
  raw.world_size = b.world_size;
  raw.address = b.address.c_str();
  raw.timeout_seconds = b.timeout_seconds;
  auto state = std::make_shared<CommunicatorState>();
  state->plugin = plugin;
  call_ccl(*plugin, "comm_init", b.rank, [&](pg_error* err) {
    return plugin->table->comm_init(plugin->state, &raw, &state->comm, err);
  });
  if (state->comm == nullptr)
    throw Error(ErrorKind::internal,
                "[comm_init] ccl " + plugin->name + ": returned PG_OK but no communicator");
  pg_ccl_comm_info info{};
  info.struct_size = sizeof(info);
  call_ccl(*plugin, "comm_info", b.rank,
           [&](pg_error* err) { return plugin->table->comm_info(state->comm, &info, err); });
  info.transport[sizeof(info.transport) - 1] = '\0';
  if (info.rank != b.rank || info.world_size != b.world_size)
    user_error("[communicator] ccl " + plugin->name + " numbers this process rank " +
               std::to_string(info.rank) + " of " + std::to_string(info.world_size) +
               ", but it was asked for rank " + std::to_string(b.rank) + " of " +
               std::to_string(b.world_size));
  state->rank = info.rank;
  state->world_size = info.world_size;
  state->timeout_seconds = info.timeout_seconds;
  state->transport = info.transport;
  return state;
}

}  // namespace detail

Communicator::Communicator(std::shared_ptr<detail::CommunicatorState> state)
    : state_(std::move(state)) {}

int Communicator::rank() const {
  return state_->rank;
}
int Communicator::world_size() const {
  return state_->world_size;
}
const std::string& Communicator::plugin_name() const {
  return state_->plugin->name;
}
const std::string& Communicator::transport() const {
  return state_->transport;
}
double Communicator::timeout_seconds() const {
  return state_->timeout_seconds;
}

void Communicator::all_reduce(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                              pg_dtype dtype, ReduceOp op) const {
  const detail::CommunicatorState& s = *state_;
  detail::call_ccl(*s.plugin, "all_reduce", s.rank, [&](pg_error* err) {
    return s.plugin->table->all_reduce(s.comm, &send, &recv, count, dtype,
                                       static_cast<uint32_t>(op), nullptr, err);
  });
}

void Communicator::broadcast(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                             pg_dtype dtype, int root) const {
  const detail::CommunicatorState& s = *state_;
  if (root < 0 || root >= s.world_size)
    user_error("[broadcast] root " + std::to_string(root) + " is not a rank of a world of size " +
               std::to_string(s.world_size));
  detail::call_ccl(*s.plugin, "broadcast", s.rank, [&](pg_error* err) {
    return s.plugin->table->broadcast(s.comm, &send, &recv, count, dtype, root, nullptr, err);
  });
}

void Communicator::all_gather(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                              pg_dtype dtype) const {
  const detail::CommunicatorState& s = *state_;
  detail::call_ccl(*s.plugin, "all_gather", s.rank, [&](pg_error* err) {
    return s.plugin->table->all_gather(s.comm, &send, &recv, count, dtype, nullptr, err);
  });
}

void Communicator::reduce_scatter(const pg_ccl_buffer& send, const pg_ccl_buffer& recv,
                                  uint64_t count, pg_dtype dtype, ReduceOp op) const {
  const detail::CommunicatorState& s = *state_;
  detail::call_ccl(*s.plugin, "reduce_scatter", s.rank, [&](pg_error* err) {
    return s.plugin->table->reduce_scatter(s.comm, &send, &recv, count, dtype,
                                           static_cast<uint32_t>(op), nullptr, err);
  });
}

void Communicator::barrier() const {
  const detail::CommunicatorState& s = *state_;
  detail::call_ccl(*s.plugin, "barrier", s.rank,
                   [&](pg_error* err) { return s.plugin->table->barrier(s.comm, err); });
}

pg_ccl_buffer Communicator::describe(const Device& device, const Buffer& buffer, uint64_t offset) {
  pg_ccl_buffer b{};
  b.struct_size = sizeof(b);
  b.device_plugin = device.plugin_table();
  b.device = device.handle();
  b.buffer = buffer.handle();
  b.offset = offset;
  return b;
}

pg_ccl_buffer Communicator::describe_host(void* host) {
  pg_ccl_buffer b{};
  b.struct_size = sizeof(b);
  b.host = host;
  return b;
}

}  // namespace polygrad
