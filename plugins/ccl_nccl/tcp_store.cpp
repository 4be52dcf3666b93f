#include "tcp_store.hpp"

#include <polygrad/plugin.h>
#include <polygrad/plugin_error.hpp>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace polygrad::ccl_nccl {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kMagic[4] = {'P', 'G', 'S', '1'};
/// Most bytes one rank may send: the store carries ids and names, not tensors.
constexpr uint64_t kMaxBlob = 1 << 20;

/// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { reset(); }
  int fd() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string errno_text(int e) {
  return std::strerror(e);
}

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

/// Waits until fd is ready for `events`; false when the deadline passed first.
bool wait_ready(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) sdk::fail(PG_ERR_DEVICE, what + ": poll: " + errno_text(errno));
  }
}

/// Sends all of [data, data + n) before the deadline; `who` names the other end.
void send_all(int fd, const void* data, size_t n, Clock::time_point deadline,
              const std::string& who) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_ready(fd, POLLOUT, deadline, who))
      sdk::fail(PG_ERR_TIMEOUT, "sending to " + who + " timed out");
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      sdk::fail(PG_ERR_PEER, "sending to " + who + " failed: " + errno_text(errno));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
}

/// Receives exactly n bytes before the deadline. Throws PG_ERR_PEER when the other end
/// closes first, naming `who` and what was expected.
void recv_all(int fd, void* data, size_t n, Clock::time_point deadline, const std::string& who,
              const std::string& expected) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_ready(fd, POLLIN, deadline, who))
      sdk::fail(PG_ERR_TIMEOUT, who + " sent no " + expected + " within the timeout");
    ssize_t k = ::recv(fd, p, n, 0);
    if (k == 0)
      sdk::fail(PG_ERR_PEER, who + " closed the connection before sending " + expected +
                                 " (it failed or exited)");
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      sdk::fail(PG_ERR_PEER, "receiving from " + who + " failed: " + errno_text(errno));
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

/// "5" or "0.5": seconds as a person writes them.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

uint64_t get_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

/// The addresses `address` resolves to (passive: for bind).
addrinfo* resolve(const StoreAddress& a, bool passive, const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* out = nullptr;
  int r = ::getaddrinfo(a.host.c_str(), a.port.c_str(), &hints, &out);
  if (r != 0 || out == nullptr)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              "tcp store " + address + ": cannot resolve '" + a.host + "': " + ::gai_strerror(r));
  return out;
}

Socket listen_at(const std::string& address) {
  StoreAddress a = parse_store_address(address);
  addrinfo* list = resolve(a, true, address);
  std::string last = "no address";
  Socket s;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    Socket c(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (c.fd() < 0) {
      last = errno_text(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(c.fd(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(c.fd(), 128) != 0) {
      last = errno_text(errno);
      continue;
    }
    s = std::move(c);
    break;
  }
  ::freeaddrinfo(list);
  if (s.fd() < 0)
    sdk::fail(PG_ERR_DEVICE, "tcp store: rank 0 cannot listen at " + address + ": " + last);
  return s;
}

/// Connects to rank 0, retrying (it may not listen yet) until the deadline.
Socket connect_to(const std::string& address, int rank, double timeout_seconds,
                  Clock::time_point deadline) {
  StoreAddress a = parse_store_address(address);
  std::string last = "no address";
  for (;;) {
    addrinfo* list = resolve(a, false, address);
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
      Socket c(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
      if (c.fd() < 0) {
        last = errno_text(errno);
        continue;
      }
      if (::connect(c.fd(), ai->ai_addr, ai->ai_addrlen) == 0) {
        ::freeaddrinfo(list);
        int one = 1;
        ::setsockopt(c.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return c;
      }
      last = errno_text(errno);
    }
    ::freeaddrinfo(list);
    if (Clock::now() >= deadline)
      sdk::fail(PG_ERR_TIMEOUT, "tcp store: rank " + std::to_string(rank) +
                                    " could not reach rank 0's store at " + address + " within " +
                                    seconds_text(timeout_seconds) + " s (" + last + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string rank_list(const std::vector<bool>& arrived) {
  std::string out;
  for (size_t r = 1; r < arrived.size(); ++r) {
    if (arrived[r]) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(r);
  }
  return out;
}

std::vector<std::string> serve(const std::string& address, int world_size, const std::string& blob,
                               double timeout_seconds, Clock::time_point deadline) {
  Socket listener = listen_at(address);
  std::vector<std::string> blobs(static_cast<size_t>(world_size));
  std::vector<bool> arrived(static_cast<size_t>(world_size), false);
  std::vector<Socket> peers(static_cast<size_t>(world_size));
  blobs[0] = blob;
  arrived[0] = true;
  for (int waiting = world_size - 1; waiting > 0;) {
    if (!wait_ready(listener.fd(), POLLIN, deadline, "tcp store at " + address))
      sdk::fail(PG_ERR_TIMEOUT, "tcp store at " + address + ": rank 0 waited " +
                                    seconds_text(timeout_seconds) + " s for rank(s) " +
                                    rank_list(arrived) + " of " + std::to_string(world_size) +
                                    ", which never connected");
    Socket c(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd() < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      sdk::fail(PG_ERR_DEVICE, "tcp store at " + address + ": accept: " + errno_text(errno));
    }
    const std::string who = "a peer of the tcp store at " + address;
    unsigned char head[4 + 4 + 4 + 8];
    recv_all(c.fd(), head, sizeof(head), deadline, who, "its rank");
    if (std::memcmp(head, kMagic, 4) != 0) continue;  // not one of ours: ignore it
    const uint32_t r = get_u32(head + 4);
    const uint32_t w = get_u32(head + 8);
    const uint64_t n = get_u64(head + 12);
    if (static_cast<int>(w) != world_size)
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "tcp store at " + address + ": rank " + std::to_string(r) +
                                             " says the world has " + std::to_string(w) +
                                             " ranks, rank 0 says " + std::to_string(world_size));
    if (r == 0 || static_cast<int>(r) >= world_size || arrived[r])
      sdk::fail(PG_ERR_INVALID_ARGUMENT, "tcp store at " + address +
                                             ": a second rank 0 or a rank " + std::to_string(r) +
                                             " outside 1.." + std::to_string(world_size - 1) +
                                             " or already there connected");
    if (n > kMaxBlob)
      sdk::fail(PG_ERR_INVALID_ARGUMENT,
                "tcp store at " + address + ": rank " + std::to_string(r) + " sent too much");
    blobs[r].resize(n);
    recv_all(c.fd(), blobs[r].data(), n, deadline, "rank " + std::to_string(r), "its data");
    arrived[r] = true;
    peers[r] = std::move(c);
    --waiting;
  }
  std::string reply;
  for (const std::string& b : blobs) {
    put_u64(reply, b.size());
    reply += b;
  }
  for (int r = 1; r < world_size; ++r)
    send_all(peers[static_cast<size_t>(r)].fd(), reply.data(), reply.size(), deadline,
             "rank " + std::to_string(r));
  return blobs;
}

std::vector<std::string> join(const std::string& address, int rank, int world_size,
                              const std::string& blob, double timeout_seconds,
                              Clock::time_point deadline) {
  Socket c = connect_to(address, rank, timeout_seconds, deadline);
  std::string hello(kMagic, 4);
  auto put_u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) hello.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put_u32(static_cast<uint32_t>(rank));
  put_u32(static_cast<uint32_t>(world_size));
  put_u64(hello, blob.size());
  hello += blob;
  const std::string who = "rank 0's store at " + address;
  send_all(c.fd(), hello.data(), hello.size(), deadline, who);
  std::vector<std::string> blobs(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    unsigned char len[8];
    recv_all(c.fd(), len, sizeof(len), deadline, who, "the ranks' data");
    const uint64_t n = get_u64(len);
    if (n > kMaxBlob) sdk::fail(PG_ERR_DEVICE, who + " sent a malformed reply");
    blobs[static_cast<size_t>(r)].resize(n);
    recv_all(c.fd(), blobs[static_cast<size_t>(r)].data(), n, deadline, who, "the ranks' data");
  }
  return blobs;
}

}  // namespace

StoreAddress parse_store_address(const std::string& address) {
  StoreAddress out;
  size_t colon = std::string::npos;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close != std::string::npos && close + 1 < address.size() && address[close + 1] == ':') {
      out.host = address.substr(1, close - 1);
      colon = close + 1;
    }
  } else {
    colon = address.rfind(':');
    if (colon != std::string::npos) out.host = address.substr(0, colon);
  }
  if (colon != std::string::npos) out.port = address.substr(colon + 1);
  bool digits = !out.port.empty() && out.port.size() <= 5;
  for (char ch : out.port) digits = digits && ch >= '0' && ch <= '9';
  if (out.host.empty() || !digits || std::atoi(out.port.c_str()) > 65535)
    sdk::fail(PG_ERR_INVALID_ARGUMENT,
              "tcp store address '" + address + "' is not host:port (e.g. 127.0.0.1:29500)");
  return out;
}

std::string store_address_from_env() {
  const char* host = std::getenv("MASTER_ADDR");
  const char* port = std::getenv("MASTER_PORT");
  if (host == nullptr || port == nullptr || host[0] == '\0' || port[0] == '\0') return "";
  std::string h = host;
  if (h.find(':') != std::string::npos && h[0] != '[') h = "[" + h + "]";
  return h + ":" + port;
}

std::vector<std::string> tcp_all_gather(const std::string& address, int rank, int world_size,
                                        const std::string& blob, double timeout_seconds) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    sdk::fail(PG_ERR_INVALID_ARGUMENT, "tcp store: rank " + std::to_string(rank) +
                                           " is outside a world of " + std::to_string(world_size));
  if (blob.size() > kMaxBlob) sdk::fail(PG_ERR_INVALID_ARGUMENT, "tcp store: too much data");
  if (world_size == 1) return {blob};
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  return rank == 0 ? serve(address, world_size, blob, timeout_seconds, deadline)
                   : join(address, rank, world_size, blob, timeout_seconds, deadline);
}

}  // namespace polygrad::ccl_nccl
