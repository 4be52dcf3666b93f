// The C API's collective-communication entry points (pg_comm_*), over
// polygrad::Registry::global().communicator and the tensor collectives of polygrad/ccl.hpp,
// and pg_all_reduce_devices (polygrad/device_collectives.hpp).
#include "capi/support.hpp"

#include <polygrad/ccl.hpp>
#include <polygrad/device_collectives.hpp>
#include <polygrad/registry.hpp>

/// What a pg_comm_t points to: one Communicator handle on the heap.
struct pg_comm {
  polygrad::Communicator comm;
};

namespace {

const polygrad::Communicator& comm_arg(pg_comm_t c) {
  if (!c) polygrad::user_error("argument 'c' (the communicator) is NULL");
  return c->comm;
}

polygrad::ReduceOp reduce_arg(int op) {
  if (op != PG_COMM_SUM && op != PG_COMM_MAX && op != PG_COMM_MEAN)
    polygrad::user_error("argument 'op' is " + std::to_string(op) +
                         ", not a pg_comm_reduce (0 sum, 1 max, 2 mean)");
  return static_cast<polygrad::ReduceOp>(op);
}

polygrad::DeviceReduce algorithm_arg(int algorithm) {
  switch (algorithm) {
    case PG_DEVICE_REDUCE_AUTO:
      return polygrad::DeviceReduce::automatic;
    case PG_DEVICE_REDUCE_NAIVE:
      return polygrad::DeviceReduce::naive;
    case PG_DEVICE_REDUCE_RING:
      return polygrad::DeviceReduce::ring;
    default:
      polygrad::user_error("argument 'algorithm' is " + std::to_string(algorithm) +
                           ", not a pg_device_reduce (0 auto, 1 naive, 2 ring)");
  }
}

}  // namespace

using namespace polygrad::capi;

extern "C" {

POLYGRAD_API pg_api_status pg_comm_init(const char* plugin, int rank, int world_size,
                                        const char* address, double timeout_seconds,
                                        pg_comm_t* out) {
  return guard("pg_comm_init", [&] {
    if (!plugin) polygrad::user_error("argument 'plugin' is NULL");
    check_out(out, "out");
    polygrad::Bootstrap b;
    b.rank = rank;
    b.world_size = world_size;
    b.address = address ? address : "";
    b.timeout_seconds = timeout_seconds;
    *out = new pg_comm{polygrad::Registry::global().communicator(plugin, b)};
  });
}

POLYGRAD_API void pg_comm_free(pg_comm_t c) {
  delete c;
}

POLYGRAD_API pg_api_status pg_comm_rank(pg_comm_t c, int* out) {
  return guard("pg_comm_rank", [&] {
    const polygrad::Communicator& comm = comm_arg(c);
    check_out(out, "out");
    *out = comm.rank();
  });
}

POLYGRAD_API pg_api_status pg_comm_world_size(pg_comm_t c, int* out) {
  return guard("pg_comm_world_size", [&] {
    const polygrad::Communicator& comm = comm_arg(c);
    check_out(out, "out");
    *out = comm.world_size();
  });
}

POLYGRAD_API pg_api_status pg_comm_transport(pg_comm_t c, const char** out) {
  return guard("pg_comm_transport", [&] {
    const polygrad::Communicator& comm = comm_arg(c);
    check_out(out, "out");
    *out = comm.transport().c_str();
  });
}

POLYGRAD_API pg_api_status pg_comm_all_reduce(pg_comm_t c, pg_tensor_t x, int op,
                                              pg_tensor_t* out) {
  return guard("pg_comm_all_reduce",
               [&] { put(out, polygrad::all_reduce(comm_arg(c), arg(x, "x"), reduce_arg(op))); });
}

POLYGRAD_API pg_api_status pg_comm_all_reduce_inplace(pg_comm_t c, pg_tensor_t x, int op) {
  return guard("pg_comm_all_reduce_inplace", [&] {
    if (!x) polygrad::user_error("argument 'x' is NULL");
    polygrad::all_reduce_inplace(comm_arg(c), x->t, reduce_arg(op));
  });
}

POLYGRAD_API pg_api_status pg_comm_broadcast(pg_comm_t c, pg_tensor_t x, int root,
                                             pg_tensor_t* out) {
  return guard("pg_comm_broadcast",
               [&] { put(out, polygrad::broadcast(comm_arg(c), arg(x, "x"), root)); });
}

POLYGRAD_API pg_api_status pg_comm_all_gather(pg_comm_t c, pg_tensor_t x, pg_tensor_t* out) {
  return guard("pg_comm_all_gather",
               [&] { put(out, polygrad::all_gather(comm_arg(c), arg(x, "x"))); });
}

POLYGRAD_API pg_api_status pg_comm_reduce_scatter(pg_comm_t c, pg_tensor_t x, int op,
                                                  pg_tensor_t* out) {
  return guard("pg_comm_reduce_scatter", [&] {
    put(out, polygrad::reduce_scatter(comm_arg(c), arg(x, "x"), reduce_arg(op)));
  });
}

POLYGRAD_API pg_api_status pg_comm_barrier(pg_comm_t c) {
  return guard("pg_comm_barrier", [&] { comm_arg(c).barrier(); });
}

POLYGRAD_API pg_api_status pg_all_reduce_devices(const pg_tensor_t* tensors, size_t n, int op,
                                                 int algorithm, uint64_t ring_bytes,
                                                 pg_tensor_t* out) {
  return guard("pg_all_reduce_devices", [&] {
    std::vector<polygrad::Tensor> ts = tensors_arg(tensors, n, "tensors");
    if (n > 0) check_out(out, "out");
    std::vector<polygrad::Tensor> reduced =
        polygrad::all_reduce_devices(ts, reduce_arg(op), algorithm_arg(algorithm),
                                     ring_bytes == 0 ? polygrad::kRingBytes : ring_bytes);
    for (size_t i = 0; i < n; ++i) out[i] = new pg_tensor{reduced[i]};
  });
}

}  // extern "C"
