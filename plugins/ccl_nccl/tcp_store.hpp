// A small TCP rendezvous in the manner of torchrun's store: rank 0 listens at "host:port", every
// other rank connects to it, each sends a blob of bytes and every rank gets all the blobs back
// in rank order. The NCCL plugin exchanges its unique id (rank 0's blob) and each rank's
// process and host (to name a dead peer) through it. Every wait has a deadline: a rank that
// never comes is an error naming it, never a hang.
#ifndef POLYGRAD_CCL_NCCL_TCP_STORE_HPP
#define POLYGRAD_CCL_NCCL_TCP_STORE_HPP

#include <string>
#include <vector>

namespace polygrad::ccl_nccl {

/// "host:port" or "[v6 address]:port" split into its parts; throws sdk::Error
/// (PG_ERR_INVALID_ARGUMENT) naming the address when it is not of that form.
struct StoreAddress {
  std::string host;
  std::string port;
};
StoreAddress parse_store_address(const std::string& address);

/// The address from torchrun's variables: "$MASTER_ADDR:$MASTER_PORT", or "" when either is
/// unset.
std::string store_address_from_env();

/// Every rank calls it with the same address and world size: rank 0 binds and listens (the
/// port must be free), the others connect (retrying until rank 0 listens). Returns the blobs of
/// ranks 0 .. world_size-1. Throws sdk::Error: PG_ERR_TIMEOUT naming the ranks that did not
/// come (on rank 0) or the store that did not answer (elsewhere) within `timeout_seconds`;
/// PG_ERR_PEER when a peer closed its connection early; PG_ERR_INVALID_ARGUMENT for a bad
/// address or a peer that disagrees on the world size; PG_ERR_DEVICE for a socket error.
std::vector<std::string> tcp_all_gather(const std::string& address, int rank, int world_size,
                                        const std::string& blob, double timeout_seconds);

}  // namespace polygrad::ccl_nccl

#endif  // POLYGRAD_CCL_NCCL_TCP_STORE_HPP
