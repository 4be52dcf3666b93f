// ccl_mpi: the collectives of pg_ccl_plugin over one communicator (ccl.h says what each does).
// Each throws sdk::Error; plugin.cpp's entries turn that into a status.
#ifndef POLYGRAD_CCL_MPI_COLLECTIVES_HPP
#define POLYGRAD_CCL_MPI_COLLECTIVES_HPP

#include "comm.hpp"

namespace polygrad::ccl_mpi {

void all_reduce(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, uint32_t op, pg_stream_t stream);
void broadcast(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
               uint32_t dtype, int32_t root, pg_stream_t stream);
void all_gather(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                uint32_t dtype, pg_stream_t stream);
void reduce_scatter(Comm& c, const pg_ccl_buffer* send, const pg_ccl_buffer* recv, uint64_t count,
                    uint32_t dtype, uint32_t op, pg_stream_t stream);
void barrier(Comm& c);

}  // namespace polygrad::ccl_mpi

#endif  // POLYGRAD_CCL_MPI_COLLECTIVES_HPP
