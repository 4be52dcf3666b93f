// The NCCL plugin's TCP store between real processes on the loopback: every rank gets every
// rank's bytes in rank order, a late rank 0 is waited for, and a rank that never comes or a
// store that never answers is an error naming it within the timeout.
#include "tcp_store.hpp"

#include <polygrad/plugin_error.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace polygrad::ccl_nccl {
namespace {

/// A port nothing listens on now (the kernel's pick, released at once).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return -1;
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string blob_of(int rank) {
  // Bytes of every value, a zero among them, and a length that differs by rank.
  std::string b = "rank " + std::to_string(rank) + ":";
  for (int i = 0; i < 300 + rank; ++i) b.push_back(static_cast<char>((i * 7 + rank) & 0xff));
  return b;
}

/// Exit codes of a child rank.
enum Child { kOk = 0, kWrongData = 1, kThrew = 2, kPeerError = 3, kTimeoutError = 4 };

/// Runs rank `rank` in a child process; its exit code says what it got.
pid_t spawn_rank(const std::string& address, int rank, int world, double timeout) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  int code = kOk;
  try {
    std::vector<std::string> got = tcp_all_gather(address, rank, world, blob_of(rank), timeout);
    for (int r = 0; r < world; ++r)
      if (got.size() != static_cast<size_t>(world) || got[static_cast<size_t>(r)] != blob_of(r))
        code = kWrongData;
  } catch (const sdk::Error& e) {
    code = e.status() == PG_ERR_PEER      ? kPeerError
           : e.status() == PG_ERR_TIMEOUT ? kTimeoutError
                                          : kThrew;
  } catch (...) {
    code = kThrew;
  }
  ::_exit(code);
}

int exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TcpStore, ThreeProcessesGetEveryRanksBytesInOrder) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  // The other ranks start first: they retry until rank 0 listens.
  pid_t r1 = spawn_rank(address, 1, 3, 20);
  pid_t r2 = spawn_rank(address, 2, 3, 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<std::string> got = tcp_all_gather(address, 0, 3, blob_of(0), 20);
  ASSERT_EQ(got.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(got[static_cast<size_t>(r)], blob_of(r)) << "rank " << r;
  EXPECT_EQ(exit_code(r1), kOk);
  EXPECT_EQ(exit_code(r2), kOk);
}

TEST(TcpStore, RankThatNeverComesIsNamedAtTheTimeout) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  pid_t r1 = spawn_rank(address, 1, 3, 20);
  const auto start = std::chrono::steady_clock::now();
  try {
    tcp_all_gather(address, 0, 3, blob_of(0), 1.0);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_TIMEOUT);
    EXPECT_NE(std::string(e.what()).find("waited 1 s for rank(s) 2 of 3, which never connected"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Rank 1 sees rank 0's store close before the data came.
  EXPECT_EQ(exit_code(r1), kPeerError);
}

TEST(TcpStore, NoStoreIsATimeoutNamingTheAddress) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  try {
    tcp_all_gather(address, 1, 2, blob_of(1), 0.5);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_TIMEOUT);
    EXPECT_NE(std::string(e.what()).find("rank 1 could not reach rank 0's store at " + address +
                                         " within 0.5 s"),
              std::string::npos)
        << e.what();
  }
}

TEST(TcpStore, WorldSizeDisagreementIsRefused) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  pid_t r1 = spawn_rank(address, 1, 3, 5);
  try {
    tcp_all_gather(address, 0, 2, blob_of(0), 5);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("rank 1 says the world has 3 ranks, rank 0 says 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(exit_code(r1), kPeerError);
}

TEST(TcpStore, AddressesAndTheEnvironment) {
  EXPECT_EQ(parse_store_address("10.0.0.1:29500").host, "10.0.0.1");
  EXPECT_EQ(parse_store_address("[::1]:29500").host, "::1");
  EXPECT_EQ(parse_store_address("[::1]:29500").port, "29500");
  for (const char* bad : {"", "host", "host:", ":29500", "host:99999", "host:12a"}) {
    try {
      parse_store_address(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const sdk::Error& e) {
      EXPECT_EQ(e.status(), PG_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("is not host:port"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("MASTER_ADDR");
  EXPECT_EQ(store_address_from_env(), "");
  ::setenv("MASTER_ADDR", "node7", 1);
  ::setenv("MASTER_PORT", "29511", 1);
  EXPECT_EQ(store_address_from_env(), "node7:29511");
  ::unsetenv("MASTER_ADDR");
  ::unsetenv("MASTER_PORT");
}

}  // namespace
}  // namespace polygrad::ccl_nccl
