// The collectives: each stages its buffers to host memory where the device needs it, starts
// the nonblocking MPI collective and waits for it with the communicator's deadline.
#include "collectives.hpp"

#include <polygrad/huge_pages.hpp>

#include <cstdlib>
#include <cstring>
#include <new>

namespace polygrad::ccl_mpi {

namespace {

struct DtypeInfo {
  MPI_Datatype mpi;  ///< MPI_DATATYPE_NULL: no MPI type for reductions (16-bit floats)
  uint32_t size;
  bool is_float;
};

DtypeInfo dtype_info(uint32_t dtype, const char* op) {
  switch (dtype) {
    case PG_DTYPE_BOOL:
    case PG_DTYPE_UINT8:
      return {MPI_UINT8_T, 1, false};
    case PG_DTYPE_INT8:
      return {MPI_INT8_T, 1, false};
    case PG_DTYPE_INT16:
      return {MPI_INT16_T, 2, false};
    case PG_DTYPE_INT32:
      return {MPI_INT32_T, 4, false};
    case PG_DTYPE_INT64:
      return {MPI_INT64_T, 8, false};
    case PG_DTYPE_UINT16:
      return {MPI_UINT16_T, 2, false};
    case PG_DTYPE_UINT32:
      return {MPI_UINT32_T, 4, false};
    case PG_DTYPE_UINT64:
      return {MPI_UINT64_T, 8, false};
    case PG_DTYPE_FLOAT16:
    case PG_DTYPE_BFLOAT16:
      return {MPI_DATATYPE_NULL, 2, true};
    case PG_DTYPE_FLOAT32:
      return {MPI_FLOAT, 4, true};
    case PG_DTYPE_FLOAT64:
      return {MPI_DOUBLE, 8, true};
    default:
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                std::string(op) + ": dtype " + std::to_string(dtype) + " is not a pg_dtype");
  }
}

/// The MPI reduction for `op` (MEAN reduces with a sum, divided afterwards).
MPI_Op reduction(uint32_t op, const DtypeInfo& d, uint32_t dtype, const char* name) {
  if (op != PG_CCL_SUM && op != PG_CCL_MAX && op != PG_CCL_MEAN)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, std::string(name) + ": reduction " + std::to_string(op) +
                                           " is not a pg_ccl_reduce_op");
  if (d.mpi == MPI_DATATYPE_NULL)
    sdk::fail(PG_ERR_UNSUPPORTED, std::string(name) + ": MPI has no arithmetic on dtype " +
                                      std::to_string(dtype) + " (16-bit floats); cast to float32");
  if (op == PG_CCL_MEAN && !d.is_float)
    sdk::fail(PG_ERR_UNSUPPORTED, std::string(name) + ": mean needs a floating-point dtype");
  return op == PG_CCL_MAX ? MPI_MAX : MPI_SUM;
}

/// dst = src / world, element by element (dst may be src): a mean's division, and an in-place
/// mean's copy out of the scratch buffer in the same pass.
void divided(void* dst, const void* src, uint64_t count, const DtypeInfo& d, int world) {
  if (d.mpi == MPI_FLOAT) {
    float* out = static_cast<float*>(dst);
    const float* in = static_cast<const float*>(src);
    const float w = static_cast<float>(world);
    for (uint64_t i = 0; i < count; ++i) out[i] = in[i] / w;
  } else {
    double* out = static_cast<double*>(dst);
    const double* in = static_cast<const double*>(src);
    for (uint64_t i = 0; i < count; ++i) out[i] = in[i] / world;
  }
}

int checked_count(uint64_t count, const char* op) {
  // MPI counts are int: larger messages would need derived datatypes.
  if (count > static_cast<uint64_t>(INT32_MAX))
    sdk::fail(PG_ERR_UNSUPPORTED,
              std::string(op) + ": " + std::to_string(count) + " elements exceed MPI's int count");
  return static_cast<int>(count);
}

std::vector<std::shared_ptr<void>> staging_of(const HostView& a, const HostView& b) {
  return {a.staging(), b.staging()};
}

void start_failed(const char* op, int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  sdk::fail(PG_ERR_DEVICE, std::string(op) + ": MPI refused to start it: " + text);
}

/// `bytes` of memory on transparent huge pages where the kernel gives them (as numpy asks for
/// large arrays): MPI's copies and reductions over it miss the TLB far less.
std::shared_ptr<void> huge_page_memory(uint64_t bytes) {
  void* p = sdk::huge_page_alloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return std::shared_ptr<void>(p, std::free);
}

}  // namespace

void all_reduce(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, uint32_t op, pg_stream_t stream) {
  std::lock_guard lock(mpi_mutex());
  check_usable(c, "all_reduce");
  const DtypeInfo d = dtype_info(dtype, "all_reduce");
  MPI_Op mpi_op = reduction(op, d, dtype, "all_reduce");
  const int n = checked_count(count, "all_reduce");
  const uint64_t bytes = count * d.size;
  HostView in(send, bytes, stream, "send buffer");
  HostView out(recv, bytes, stream, "recv buffer");
  in.fetch();
  void* dst = out.data();
  const bool in_place = in.data() == out.data();
  if (in_place) {
    if (c.scratch_bytes < bytes) {
      c.scratch = huge_page_memory(bytes);
      c.scratch_bytes = bytes;
    }
    dst = c.scratch.get();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Iallreduce(in.data(), dst, n, d.mpi, mpi_op, c.comm, &request);
  if (rc != MPI_SUCCESS) start_failed("all_reduce", rc);
  wait(c, request, "all_reduce", {in.staging(), out.staging(), c.scratch});
  if (in_place && op == PG_CCL_MEAN)
    divided(out.data(), dst, count, d, c.world_size);
  else if (in_place && bytes > 0)
    std::memcpy(out.data(), dst, bytes);
  else if (op == PG_CCL_MEAN)
    divided(out.data(), out.data(), count, d, c.world_size);
  out.store();
}

void broadcast(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
               uint32_t dtype, int32_t root, pg_stream_t stream) {
  std::lock_guard lock(mpi_mutex());
  check_usable(c, "broadcast");
  if (root < 0 || root >= c.world_size)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, "broadcast: root " + std::to_string(root) +
                                           " is not a rank of a world of size " +
                                           std::to_string(c.world_size));
  const DtypeInfo d = dtype_info(dtype, "broadcast");
  const uint64_t bytes = count * d.size;
  const int n = checked_count(bytes, "broadcast");
  HostView out(recv, bytes, stream, "recv buffer");
  if (c.rank == root) {
    HostView in(send, bytes, stream, "send buffer");
    in.fetch();
    if (in.data() != out.data() && bytes > 0) std::memcpy(out.data(), in.data(), bytes);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Ibcast(out.data(), n, MPI_BYTE, root, c.comm, &request);
  if (rc != MPI_SUCCESS) start_failed("broadcast", rc);
  wait(c, request, "broadcast", {out.staging()});
  out.store();
}

void all_gather(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, pg_stream_t stream) {
  std::lock_guard lock(mpi_mutex());
  check_usable(c, "all_gather");
  const DtypeInfo d = dtype_info(dtype, "all_gather");
  const uint64_t bytes = count * d.size;
  const int n = checked_count(bytes * static_cast<uint64_t>(c.world_size), "all_gather");
  HostView in(send, bytes, stream, "send buffer");
  HostView out(recv, bytes * static_cast<uint64_t>(c.world_size), stream, "recv buffer");
  in.fetch();
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Iallgather(in.data(), n / c.world_size, MPI_BYTE, out.data(), n / c.world_size,
                          MPI_BYTE, c.comm, &request);
  if (rc != MPI_SUCCESS) start_failed("all_gather", rc);
  wait(c, request, "all_gather", staging_of(in, out));
  out.store();
}

void reduce_scatter(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                    uint32_t dtype, uint32_t op, pg_stream_t stream) {
  std::lock_guard lock(mpi_mutex());
  check_usable(c, "reduce_scatter");
  const DtypeInfo d = dtype_info(dtype, "reduce_scatter");
  MPI_Op mpi_op = reduction(op, d, dtype, "reduce_scatter");
  const int n = checked_count(count * static_cast<uint64_t>(c.world_size), "reduce_scatter");
  HostView in(send, count * d.size * static_cast<uint64_t>(c.world_size), stream, "send buffer");
  HostView out(recv, count * d.size, stream, "recv buffer");
  in.fetch();
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Ireduce_scatter_block(in.data(), out.data(), n / c.world_size, d.mpi, mpi_op, c.comm,
                                     &request);
  if (rc != MPI_SUCCESS) start_failed("reduce_scatter", rc);
  wait(c, request, "reduce_scatter", staging_of(in, out));
  if (op == PG_CCL_MEAN) divided(out.data(), out.data(), count, d, c.world_size);
  out.store();
}

void barrier(Comm& c) {
  std::lock_guard lock(mpi_mutex());
  check_usable(c, "barrier");
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Ibarrier(c.comm, &request);
  if (rc != MPI_SUCCESS) start_failed("barrier", rc);
  wait(c, request, "barrier", {});
}

}  // namespace polygrad::ccl_mpi
