// The host's side of collective communication, over the loopback ccl plugin (loopback_ccl.c, a
// world of one in plain C): discovery and load records of ccl plugins, refusal of another
// major, communicators, the tensor collectives and their C API, and how a dead or silent peer
// reaches the caller (Error status, PG_API_ERR_COMM).
#include <polygrad/polygrad.h>
#include <polygrad/ccl.hpp>
#include <polygrad/registry.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace polygrad {
namespace {

Registry& registry() {
  static bool added = [] {
    Registry::global().add_plugin_path(PG_TEST_CCL_DIR);
    return true;
  }();
  (void)added;
  return Registry::global();
}

const LoadRecord* record_of(const LoadReport& report, const std::string& file) {
  for (const LoadRecord& r : report.records)
    if (r.path.size() >= file.size() &&
        r.path.compare(r.path.size() - file.size(), file.size(), file) == 0)
      return &r;
  return nullptr;
}

Communicator loopback(const std::string& address = "") {
  Bootstrap b;
  b.address = address;
  b.timeout_seconds = 7;
  return registry().communicator("loopback", b);
}

TEST(Ccl, LoadReportHasOneRecordPerCclPlugin) {
  LoadReport report = registry().report();
  const LoadRecord* ok = record_of(report, "polygrad_ccl_loopback.so");
  ASSERT_NE(ok, nullptr) << format_report(report);
  EXPECT_TRUE(ok->loaded()) << format_record(*ok);
  EXPECT_EQ(ok->kind, PluginKind::ccl);
  EXPECT_EQ(ok->plugin_name, "loopback");
  EXPECT_NE(format_record(*ok).find("ccl loopback 0.0.1 CCL ABI 1.0: usable"), std::string::npos)
      << format_record(*ok);
  const LoadRecord* major = record_of(report, "polygrad_ccl_major2.so");
  ASSERT_NE(major, nullptr) << format_report(report);
  EXPECT_FALSE(major->loaded());
  EXPECT_EQ(major->stage, LoadStage::abi);
  EXPECT_EQ(major->reason, "plugin CCL ABI 2.0, host CCL ABI 1.0 (the major versions differ)");
  // A ccl plugin is never taken for a device plugin (it has no pg_plugin_entry).
  for (const LoadRecord& r : report.records) {
    if (r.kind == PluginKind::device) {
      EXPECT_EQ(r.path.find("polygrad_ccl_"), std::string::npos) << format_record(r);
    }
  }
  EXPECT_NE(report_to_json(report).find("\"kind\": \"ccl\""), std::string::npos);
}

TEST(Ccl, CommunicatorReportsItsRankAndTransport) {
  Communicator c = loopback();
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.world_size(), 1);
  EXPECT_EQ(c.plugin_name(), "loopback");
  EXPECT_EQ(c.transport(), "loopback");
  EXPECT_DOUBLE_EQ(c.timeout_seconds(), 7);
}

TEST(Ccl, UnknownPluginNamesTheLoadedOnes) {
  try {
    registry().communicator("nccl_nope", Bootstrap{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no ccl plugin named 'nccl_nope'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("loopback"), std::string::npos) << e.what();
  }
}

TEST(Ccl, RankOutsideTheWorldIsRefused) {
  Bootstrap b;
  b.rank = 2;
  b.world_size = 2;
  EXPECT_THROW(registry().communicator("loopback", b), Error);
}

TEST(Ccl, TensorCollectivesOverOneRank) {
  Communicator c = loopback();
  Tensor x =
      Tensor::from_host(std::vector<float>{1, 2, 3, 4, 5, 6}.data(), PG_DTYPE_FLOAT32, {2, 3});
  Tensor lazy = x * 2;  // not realised: the collective realises it
  EXPECT_EQ(all_reduce(c, lazy, ReduceOp::sum).to_vector<float>(),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(all_reduce(c, x, ReduceOp::mean).shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(broadcast(c, x, 0).to_vector<float>(), x.to_vector<float>());
  Tensor g = all_gather(c, x);
  EXPECT_EQ(g.shape(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(g.to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(reduce_scatter(c, x, ReduceOp::max).to_vector<float>(), x.to_vector<float>());
  // A view (a transpose) is realised in row-major order first.
  EXPECT_EQ(all_reduce(c, x.transpose(0, 1), ReduceOp::sum).to_vector<float>(),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // The in-place form realises a lazy tensor and writes its buffer, seen by every handle.
  Tensor z = x + 1;
  Tensor alias = z;
  all_reduce_inplace(c, z, ReduceOp::sum);
  EXPECT_TRUE(alias.is_realized());
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  // The input is never written.
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Ccl, MeanOfIntsAndBadRootAreUserErrors) {
  Communicator c = loopback();
  Tensor i = Tensor::from_host(std::vector<int32_t>{1, 2}.data(), PG_DTYPE_INT32, {2});
  EXPECT_THROW(all_reduce(c, i, ReduceOp::mean), Error);
  EXPECT_THROW(broadcast(c, i, 3), Error);
  Tensor odd = Tensor::zeros({3});
  EXPECT_NO_THROW(reduce_scatter(c, odd, ReduceOp::sum));  // 3 divides into 1 block
  EXPECT_THROW(reduce_scatter(c, Tensor::zeros({}), ReduceOp::sum), Error);
}

TEST(Ccl, DeadPeerIsAnErrorWithItsStatusAndName) {
  Communicator c = loopback("fail:peer");
  Tensor x = Tensor::ones({4});
  try {
    all_reduce(c, x, ReduceOp::sum);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_PEER);
    EXPECT_EQ(e.kind(), ErrorKind::user);
    EXPECT_EQ(std::string(e.what()),
              "[all_reduce] ccl loopback rank 0: PG_ERR_PEER: rank 0: peer rank 1 (pid 4242 on "
              "loopback) died");
  }
  try {
    c.barrier();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), PG_ERR_PEER);
  }
}

TEST(Ccl, CApiCollectivesAndCommStatus) {
  registry();
  pg_comm_t comm = nullptr;
  ASSERT_EQ(pg_comm_init("loopback", 0, 1, "", 3, &comm), PG_API_OK) << pg_last_error();
  int rank = -1, world = -1;
  ASSERT_EQ(pg_comm_rank(comm, &rank), PG_API_OK);
  ASSERT_EQ(pg_comm_world_size(comm, &world), PG_API_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(world, 1);
  const char* transport = nullptr;
  ASSERT_EQ(pg_comm_transport(comm, &transport), PG_API_OK);
  EXPECT_STREQ(transport, "loopback");
  const float data[3] = {1.5f, -2, 4};
  const int64_t dims[1] = {3};
  pg_tensor_t x = nullptr, y = nullptr;
  ASSERT_EQ(pg_tensor_from_data(data, PG_DTYPE_FLOAT32, dims, 1, nullptr, &x), PG_API_OK);
  ASSERT_EQ(pg_comm_all_reduce(comm, x, PG_COMM_SUM, &y), PG_API_OK) << pg_last_error();
  float out[3] = {};
  ASSERT_EQ(pg_tensor_to_host(y, out, sizeof(out)), PG_API_OK);
  EXPECT_EQ(std::vector<float>(out, out + 3), std::vector<float>(data, data + 3));
  pg_tensor_free(y);
  EXPECT_EQ(pg_comm_all_reduce(comm, x, 7, &y), PG_API_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pg_last_error()).find("not a pg_comm_reduce"), std::string::npos);
  EXPECT_EQ(pg_comm_barrier(nullptr), PG_API_ERR_INVALID_ARGUMENT);
  pg_comm_free(comm);

  ASSERT_EQ(pg_comm_init("loopback", 0, 1, "fail:timeout", 3, &comm), PG_API_OK);
  EXPECT_EQ(pg_comm_broadcast(comm, x, 0, &y), PG_API_ERR_COMM);
  EXPECT_NE(
      std::string(pg_last_error()).find("PG_ERR_TIMEOUT: rank 0: timed out waiting for rank 1"),
      std::string::npos)
      << pg_last_error();
  pg_comm_free(comm);
  pg_tensor_free(x);

  EXPECT_EQ(pg_comm_init("loopback", 0, 2, "", 0, &comm), PG_API_ERR_DEVICE);
  EXPECT_NE(std::string(pg_last_error()).find("a world of one rank only"), std::string::npos);
}

}  // namespace
}  // namespace polygrad
