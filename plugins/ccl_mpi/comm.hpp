// ccl_mpi internals: one communicator (a duplicate of MPI_COMM_WORLD), the wait that turns a
// dead peer or a timeout into an error, and the memory a collective reads and writes.
#ifndef POLYGRAD_CCL_MPI_COMM_HPP
#define POLYGRAD_CCL_MPI_COMM_HPP

#include <polygrad/ccl.h>
#include <polygrad/plugin_error.hpp>

#include <mpi.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace polygrad::ccl_mpi {

/// Where a rank runs: enough to tell, on the same host, whether its process still lives.
struct Peer {
  long pid = 0;
  std::string host;
};

/// What a failed collective left behind: the memory MPI may still touch, kept to the end.
struct Abandoned {
  std::vector<std::shared_ptr<void>> memory;
};

struct Comm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int world_size = 1;
  double timeout_seconds = 60;
  std::vector<Peer> peers;     ///< by rank
  pg_status broken = PG_OK;    ///< PG_ERR_PEER or PG_ERR_TIMEOUT once a collective failed
  std::string broken_message;  ///< the failure, repeated by every later call
  Abandoned abandoned;
  /// Where an in-place all_reduce lands before it is copied back: Open MPI's nonblocking
  /// allreduce is about twice as slow with MPI_IN_PLACE on large messages. Kept and grown.
  std::shared_ptr<void> scratch;
  uint64_t scratch_bytes = 0;
};

/// The process-wide MPI state: started by the first comm_init (PG_ERR_TIMEOUT when the job's
/// other ranks do not all start MPI within `timeout_seconds`), finalised at exit unless a
/// communicator broke (MPI_Finalize would wait for the dead peer).
void start_mpi(double timeout_seconds);
/// "Open MPI v4.1.4, ..." (MPI_Get_library_version's first line).
std::string library_version();
/// Whether this process was started by an MPI launcher; `why` says what was found.
bool under_launcher(std::string& why);
/// Held around every MPI call after MPI_Init: MPI runs MPI_THREAD_SERIALIZED, so calls from
/// several threads (on one communicator or several) take turns.
std::mutex& mpi_mutex();
/// Note that a communicator broke: MPI is not finalised at exit.
void mark_broken_process();

/// Ranks and hosts of every rank, exchanged when the communicator is made.
std::vector<Peer> exchange_peers(Comm& c);
/// Whether rank r's process is known to be gone (same host only: its pid left or is a zombie).
bool peer_gone(const Comm& c, int r);

/// Waits for `request` (a nonblocking collective named `op`) until it completes, a peer on this
/// host dies, MPI reports an error, or the timeout passes; throws sdk::Error with PG_ERR_PEER or
/// PG_ERR_TIMEOUT naming the peers, and marks the communicator broken. `keep` is the memory the
/// request uses: abandoned (never freed) when it fails.
void wait(Comm& c, MPI_Request& request, const char* op, std::vector<std::shared_ptr<void>> keep);

/// Throws the communicator's failure again when it is broken.
void check_usable(const Comm& c, const char* op);

/// The memory of one pg_ccl_buffer as host memory: the buffer's own where the device shares
/// host memory, else a staging copy (copied out of the device by `fetch`, into it by `store`).
class HostView {
 public:
  HostView(const pg_ccl_buffer* b, uint64_t bytes, pg_stream_t stream, const char* what);
  /// The host address of the data.
  void* data() const { return data_; }
  /// Copies the device's bytes into the staging copy (no-op without staging).
  void fetch();
  /// Copies the staging copy back into the device (no-op without staging).
  void store();
  /// The staging memory (or nullptr), to keep alive when a collective is abandoned.
  std::shared_ptr<void> staging() const { return staging_; }

 private:
  const pg_ccl_buffer* buffer_;
  uint64_t bytes_;
  void* data_ = nullptr;
  std::shared_ptr<void> staging_;
  std::string what_;
};

}  // namespace polygrad::ccl_mpi

#endif  // POLYGRAD_CCL_MPI_COMM_HPP
