// Collective communication between processes through a ccl plugin (sdk ccl.h): a Communicator
// is this process as one rank of a group; the collectives on tensors (all_reduce, broadcast,
// all_gather, reduce_scatter) realise their input and return a new tensor on its device.
// A peer that dies or a timeout is an Error with status PG_ERR_PEER or PG_ERR_TIMEOUT whose
// message names the peer; the communicator is then broken and every later call fails at once.
#ifndef POLYGRAD_CCL_HPP
#define POLYGRAD_CCL_HPP

#include <polygrad/ccl.h>
#include <polygrad/device.hpp>
#include <polygrad/export.hpp>
#include <polygrad/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace polygrad {

namespace detail {
struct CommunicatorState;
}

/// Reductions of all_reduce and reduce_scatter.
enum class ReduceOp { sum = PG_CCL_SUM, max = PG_CCL_MAX, mean = PG_CCL_MEAN };

/// How a communicator finds its peers (pg_ccl_bootstrap).
struct Bootstrap {
  int rank = 0;
  int world_size = 1;
  std::string address;         ///< "" = the launcher's rendezvous (mpirun's)
  double timeout_seconds = 0;  ///< <= 0: the plugin's default
};

/// One rank of a group, over a ccl plugin. Cheap to copy (shared); the plugin's communicator
/// is destroyed with the last copy.
class POLYGRAD_API Communicator {
 public:
  int rank() const;
  int world_size() const;
  /// The ccl plugin's name, e.g. "mpi".
  const std::string& plugin_name() const;
  /// The transport the plugin reports, e.g. "Open MPI v4.1.4".
  const std::string& transport() const;
  double timeout_seconds() const;

  /// Raw collectives on memory described as the ABI does (pg_ccl_buffer); counts in elements
  /// as ccl.h says. The device work that wrote `send` must have finished.
  void all_reduce(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                  pg_dtype dtype, ReduceOp op) const;
  void broadcast(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                 pg_dtype dtype, int root) const;
  void all_gather(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                  pg_dtype dtype) const;
  void reduce_scatter(const pg_ccl_buffer& send, const pg_ccl_buffer& recv, uint64_t count,
                      pg_dtype dtype, ReduceOp op) const;
  /// Returns once every rank has called it.
  void barrier() const;

  /// A pg_ccl_buffer over `buffer` of `device` (starting `offset` bytes in).
  static pg_ccl_buffer describe(const Device& device, const Buffer& buffer, uint64_t offset = 0);
  /// A pg_ccl_buffer over host memory.
  static pg_ccl_buffer describe_host(void* host);

 private:
  friend class Registry;
  explicit Communicator(std::shared_ptr<detail::CommunicatorState> state);
  std::shared_ptr<detail::CommunicatorState> state_;
};

/// x reduced over the ranks (every rank gets it), as a new tensor on x's device. `mean` on a
/// floating-point dtype only.
POLYGRAD_API Tensor all_reduce(const Communicator& comm, const Tensor& x, ReduceOp op);
/// all_reduce into x's own buffer (torch's in-place form): x is realised, then overwritten with
/// the reduced values, which every handle of x sees. Nothing is allocated, so a loop over the
/// same tensor touches no fresh memory. Graphs built from x earlier and not realised yet read
/// the new values: realise them first (as with any in-place write).
POLYGRAD_API void all_reduce_inplace(const Communicator& comm, Tensor& x, ReduceOp op);
/// root's x on every rank (same shape and dtype everywhere), as a new tensor.
POLYGRAD_API Tensor broadcast(const Communicator& comm, const Tensor& x, int root);
/// The ranks' x (same shape everywhere) concatenated along a new leading axis of world_size.
POLYGRAD_API Tensor all_gather(const Communicator& comm, const Tensor& x);
/// Block `rank` (of world_size equal blocks along axis 0) of x reduced over the ranks: x's
/// first axis must divide by the world size.
POLYGRAD_API Tensor reduce_scatter(const Communicator& comm, const Tensor& x, ReduceOp op);

}  // namespace polygrad

#endif  // POLYGRAD_CCL_HPP
