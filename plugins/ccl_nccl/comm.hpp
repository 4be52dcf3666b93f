// ccl_nccl internals: one NCCL communicator on one GPU, made nonblocking so that every wait has
// a deadline (a silent or dead peer is an error, not a hang), and the collectives on CUDA device
// buffers.
#ifndef POLYGRAD_CCL_NCCL_COMM_HPP
#define POLYGRAD_CCL_NCCL_COMM_HPP

#include <polygrad/ccl.h>
#include <polygrad/plugin_error.hpp>

#include <string>
#include <vector>

#include "libraries.hpp"

namespace polygrad::ccl_nccl {

/// Where a rank runs: enough to tell, on the same host, whether its process still lives.
struct Peer {
  long pid = 0;
  std::string host;
};

struct Comm {
  ncclComm_t nccl = nullptr;
  int rank = 0;
  int world_size = 1;
  int device = 0;  ///< the CUDA device ordinal the communicator runs on
  CUcontext context = nullptr;
  CUstream stream = nullptr;  ///< where the collectives run when the caller gives no stream
  CUdeviceptr scratch = 0;    ///< 4 bytes for barrier's all_reduce
  double timeout_seconds = 60;
  std::vector<Peer> peers;     ///< by rank
  std::string transport;       ///< "NCCL 2.28.9 on cuda:0"
  pg_status broken = PG_OK;    ///< PG_ERR_PEER or PG_ERR_TIMEOUT once a collective failed
  std::string broken_message;  ///< the failure, repeated by every later call
};

/// The CUDA device this process takes: its local rank (torchrun's LOCAL_RANK, Open MPI's
/// OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID) modulo the GPUs, else rank modulo.
int choose_device(int rank, int devices);

/// Joins the group: rank 0 makes the NCCL id, the TCP store at `address` hands it to every
/// rank, then the nonblocking ncclCommInitRankConfig is waited for against the timeout.
Comm* make_comm(const pg_ccl_bootstrap& b, double timeout_seconds);
void destroy_comm(Comm* c);

void all_reduce(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, uint32_t op, pg_stream_t stream);
void broadcast(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
               uint32_t dtype, int32_t root, pg_stream_t stream);
void all_gather(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, pg_stream_t stream);
void reduce_scatter(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                    uint32_t dtype, uint32_t op, pg_stream_t stream);
void barrier(Comm& c);

}  // namespace polygrad::ccl_nccl

#endif  // POLYGRAD_CCL_NCCL_COMM_HPP
