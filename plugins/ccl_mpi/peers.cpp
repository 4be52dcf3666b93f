// Waiting for a collective without hanging: MPI_Test polled against a deadline, and the peers on
// this host watched, so a dead peer is named within moments and a silent one at the timeout.
#include "comm.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace polygrad::ccl_mpi {

namespace {

constexpr int kHostChars = 64;  // a host name as exchanged (truncated beyond)

std::string this_host() {
  char name[kHostChars + 1] = {};
  if (gethostname(name, kHostChars) != 0) return "?";
  return name;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

std::string describe_peer(const Comm& c, int r) {
  const Peer& p = c.peers.at(static_cast<size_t>(r));
  return "rank " + std::to_string(r) + " (pid " + std::to_string(p.pid) + " on " + p.host + ")";
}

/// The ranks known to be gone, as "rank 1 (pid 12 on host)", joined; "" when none.
std::string gone_peers(const Comm& c) {
  std::string gone;
  for (int r = 0; r < c.world_size; ++r)
    if (r != c.rank && peer_gone(c, r)) gone += (gone.empty() ? "" : ", ") + describe_peer(c, r);
  return gone;
}

[[noreturn]] void break_comm(Comm& c, pg_status status, const std::string& message,
                             std::vector<std::shared_ptr<void>>& keep) {
  c.broken = status;
  c.broken_message = message;
  for (auto& m : keep) c.abandoned.memory.push_back(std::move(m));
  mark_broken_process();
  sdk::fail(status, message);
}

}  // namespace

std::vector<Peer> exchange_peers(Comm& c) {
  struct Raw {
    long pid;
    char host[kHostChars + 1];
  };
  // Slot 0 is this rank's, then one per rank: in memory that outlives a failed wait.
  const size_t n = static_cast<size_t>(c.world_size) + 1;
  std::shared_ptr<Raw[]> table(new Raw[n]());
  Raw& mine = table[0];
  mine.pid = static_cast<long>(getpid());
  const std::string host = this_host();
  host.copy(mine.host, kHostChars);
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Iallgather(&mine, sizeof(Raw), MPI_BYTE, &table[1], sizeof(Raw), MPI_BYTE, c.comm,
                          &request);
  if (rc != MPI_SUCCESS) sdk::fail(PG_ERR_DEVICE, "MPI_Iallgather failed: " + mpi_error_text(rc));
  wait(c, request, "comm_init", {std::shared_ptr<void>(table, table.get())});
  std::vector<Peer> peers;
  for (size_t i = 1; i < n; ++i) {
    const Raw& r = table[i];
    Raw copy = r;
    copy.host[kHostChars] = '\0';
    peers.push_back(Peer{copy.pid, copy.host});
  }
  return peers;
}

bool peer_gone(const Comm& c, int r) {
  const Peer& p = c.peers.at(static_cast<size_t>(r));
  if (p.pid <= 0 || p.host != c.peers.at(static_cast<size_t>(c.rank)).host) return false;
  std::ifstream stat("/proc/" + std::to_string(p.pid) + "/stat");
  if (!stat) return true;  // no such process any more
  std::string pid, comm, state;
  stat >> pid >> comm >> state;  // (a command name with spaces only shifts past comm)
  return state == "Z" || state == "X";
}

void check_usable(const Comm& c, const char* op) {
  if (c.broken != PG_OK)
    sdk::fail(c.broken, std::string(op) + ": the communicator is broken by an earlier failure: " +
                            c.broken_message);
}

void wait(Comm& c, MPI_Request& request, const char* op, std::vector<std::shared_ptr<void>> keep) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(c.timeout_seconds);
  auto next_check = start + std::chrono::milliseconds(20);
  const std::string who = "rank " + std::to_string(c.rank) + ": " + op;
  for (;;) {
    int done = 0;
    int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      std::string gone = gone_peers(c);
      break_comm(c, PG_ERR_PEER,
                 who + " failed: " + mpi_error_text(rc) +
                     (gone.empty() ? std::string() : "; peer " + gone + " is gone"),
                 keep);
    }
    if (done) return;
    const auto now = Clock::now();
    if (now >= next_check) {
      next_check = now + std::chrono::milliseconds(20);
      std::string gone = gone_peers(c);
      if (!gone.empty())
        break_comm(c, PG_ERR_PEER, who + ": peer " + gone + " died before the collective finished",
                   keep);
    }
    if (now >= deadline) {
      std::string waited;
      for (int r = 0; r < c.world_size; ++r)
        if (r != c.rank) waited += (waited.empty() ? "" : ", ") + describe_peer(c, r);
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", c.timeout_seconds);
      break_comm(c, PG_ERR_TIMEOUT,
                 who + " timed out after " + seconds + " s waiting for its peers (" + waited +
                     "): one of them is stuck, slow or gone on another host",
                 keep);
    }
    // MPI progresses only inside MPI_Test: poll without pause while a transfer may be under
    // way (as MPI_Wait does; yielding loses the core to every other runnable process), then
    // gently once it has taken long (a peer is late).
    if (now - start >= std::chrono::seconds(2))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace polygrad::ccl_mpi
