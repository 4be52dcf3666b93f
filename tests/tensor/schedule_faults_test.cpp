// A device that fails inside a schedule: the test plugin's render, load, launch or allocation
// made to fail (POLYGRAD_TEST_HOST_FAULT) while tensors realise on it. The error is a
// polygrad::Error naming the kernel (the program's name, as the plugin was given it) and the
// device; nothing crashes; the graph and its inputs are left as they were, so once the fault
// is gone the same tensors realise to the right values.
#include "harness.hpp"
#include "test_device.hpp"

#include <polygrad/capture.hpp>

#include <cctype>
#include <string>
#include <vector>

namespace {

using polygrad::Tensor;
using tensor_test::expect_values;
using tensor_test::TestDeviceFault;

class ScheduleFaults : public ::testing::Test {
 protected:
  void SetUp() override { tensor_test::load_test_plugin(); }
};

/// The error realising `t` throws (a failure when it throws none).
polygrad::Error realize_error(Tensor t) {
  try {
    t.realize();
  } catch (const polygrad::Error& e) {
    return e;
  }
  ADD_FAILURE() << "realize threw no error";
  return polygrad::Error(polygrad::ErrorKind::internal, "(none)");
}

/// A kernel's name: r or E, then letters, digits and underscores.
bool is_kernel_name(const std::string& s) {
  if (s.empty() || (s[0] != 'r' && s[0] != 'E')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

/// Checks that `e` is the user error of a failed `call` ("render", "load", "launch") of one
/// kernel on testdev:0 with `status`, and that the host's name for the kernel is the one the
/// plugin was given. Returns that name.
std::string expect_kernel_error(const polygrad::Error& e, const std::string& call,
                                pg_status status) {
  const std::string text = e.what();
  EXPECT_EQ(e.kind(), polygrad::ErrorKind::user) << text;
  EXPECT_EQ(e.status(), status) << text;
  // "[<call> '<kernel>'] testdev:0 (plugin test_host): ..."
  const std::string open = "[" + call + " '", close = "'] testdev:0 (plugin test_host):";
  const size_t at = text.find(open);
  const size_t end = at == std::string::npos ? at : text.find('\'', at + open.size());
  if (end == std::string::npos || text.compare(end, close.size(), close) != 0) {
    ADD_FAILURE() << "'" << text << "' names no kernel on testdev:0 for " << call;
    return "";
  }
  const std::string kernel = text.substr(at + open.size(), end - at - open.size());
  EXPECT_TRUE(is_kernel_name(kernel)) << text;
  EXPECT_NE(text.find("test_host: " + call + " of '" + kernel + "' failed on purpose"),
            std::string::npos)
      << text;
  return kernel;
}

const std::vector<float> kX = {1, 2, 3, 4};

Tensor input() {
  return Tensor(kX, {}, "testdev");
}

// (Each test's graph holds a constant of its own: a kernel compiled by an earlier test of this
// process would not be rendered or loaded again.)
TEST_F(ScheduleFaults, RenderFailureNamesTheKernelAndLeavesTheGraph) {
  Tensor x = input();
  Tensor y = x * 3.25f + 1;
  {
    TestDeviceFault fault("render");
    std::string k = expect_kernel_error(realize_error(y), "render", PG_ERR_UNSUPPORTED);
    EXPECT_EQ(k.rfind("E_", 0), 0u) << k;
    // Again: the failure left nothing behind that would hide it.
    EXPECT_EQ(expect_kernel_error(realize_error(y), "render", PG_ERR_UNSUPPORTED), k);
  }
  EXPECT_FALSE(y.is_realized());
  EXPECT_EQ(x.to_vector<float>(), kX);
  expect_values(y, {4}, {4.25, 7.5, 10.75, 14});
}

TEST_F(ScheduleFaults, LoadFailureNamesTheKernelAndLeavesTheGraph) {
  Tensor x = input();
  Tensor y = (x - 5.5f).square();
  {
    TestDeviceFault fault("load");
    std::string k = expect_kernel_error(realize_error(y), "load", PG_ERR_COMPILE);
    EXPECT_EQ(k.rfind("E_", 0), 0u) << k;
  }
  EXPECT_FALSE(y.is_realized());
  EXPECT_EQ(x.to_vector<float>(), kX);
  expect_values(y, {4}, {20.25, 12.25, 6.25, 2.25});
}

// Two kernels built side by side (the test plugin declares concurrent loads): the second's
// build fails while the first's succeeds. The error names the second; once the fault is gone,
// only that kernel compiles again (the failed build left no program behind, the good one stays).
TEST_F(ScheduleFaults, FailedBuildOfOneKernelIsCompiledAgainAlone) {
  Tensor x = input();
  Tensor r = (x * 9).sum().contiguous();  // 90
  Tensor y = x - r;
  {
    TestDeviceFault fault("load:E_");
    std::string k = expect_kernel_error(realize_error(y), "load", PG_ERR_COMPILE);
    EXPECT_EQ(k.rfind("E_", 0), 0u) << k;
    EXPECT_EQ(expect_kernel_error(realize_error(y), "load", PG_ERR_COMPILE), k);
  }
  EXPECT_FALSE(y.is_realized());
  EXPECT_FALSE(r.is_realized());
  const size_t before = polygrad::compiled_kernel_count();
  expect_values(y, {4}, {-89, -88, -87, -86});
  EXPECT_EQ(polygrad::compiled_kernel_count(), before + 1);
  expect_values(r, {}, {90});
}

// A capture whose kernel fails to build fails at capture time, naming the kernel, as an
// eager realize would; nothing is left recorded, and a capture without the fault replays.
TEST_F(ScheduleFaults, CaptureOfAKernelThatFailsToBuildFails) {
  Tensor x = input();
  Tensor y;
  {
    TestDeviceFault fault("load");
    try {
      polygrad::capture([&] { y = (x * 2.75f - 1).realize(); });
      ADD_FAILURE() << "capture threw no error";
    } catch (const polygrad::Error& e) {
      EXPECT_EQ(expect_kernel_error(e, "load", PG_ERR_COMPILE).rfind("E_", 0), 0u) << e.what();
    }
  }
  polygrad::Captured step = polygrad::capture([&] { y = (x * 2.75f - 1).realize(); });
  step.run();
  expect_values(y, {4}, {1.75, 4.5, 7.25, 10});
}

// Two kernels: a reduce, then an elementwise kernel that reads it. A launch failure of either
// names that kernel; the second fails after the first ran.
TEST_F(ScheduleFaults, LaunchFailureNamesTheKernelThatFailed) {
  Tensor x = input();
  Tensor r = (x * 7).sum().contiguous();  // 70
  Tensor y = x + r;
  {
    TestDeviceFault fault("launch");  // every launch: the first kernel fails
    std::string first = expect_kernel_error(realize_error(y), "launch", PG_ERR_LAUNCH);
    EXPECT_EQ(first.rfind("r", 0), 0u) << first;
  }
  {
    TestDeviceFault fault("launch:E_");  // the reduce runs, the elementwise kernel fails
    std::string second = expect_kernel_error(realize_error(y), "launch", PG_ERR_LAUNCH);
    EXPECT_EQ(second.rfind("E_", 0), 0u) << second;
  }
  EXPECT_FALSE(y.is_realized());
  EXPECT_FALSE(r.is_realized());
  EXPECT_EQ(x.to_vector<float>(), kX);
  expect_values(y, {4}, {71, 72, 73, 74});
  expect_values(r, {}, {70});
}

// An allocation is made when a step first needs its buffers: the error names the kernel (or
// the copy) and the device as well as the plugin's own message.
TEST_F(ScheduleFaults, AllocationFailureNamesTheKernelAndTheDevice) {
  Tensor x = input();
  Tensor y = x * 2 + 1;
  {
    TestDeviceFault fault("alloc");
    polygrad::Error e = realize_error(y);
    const std::string text = e.what();
    EXPECT_EQ(e.kind(), polygrad::ErrorKind::user) << text;
    EXPECT_EQ(e.status(), PG_ERR_OUT_OF_MEMORY) << text;
    // "realize: allocating buffer slot 0 of kernel '<E_...>' on testdev:0: [alloc] ..."
    const std::string head = "realize: allocating buffer slot 0 of kernel '";
    const std::string tail =
        "' on testdev:0: [alloc] testdev:0 (plugin test_host): PG_ERR_OUT_OF_MEMORY: test_host: "
        "alloc of '16 bytes' failed on purpose";
    const size_t end = text.find(tail);
    ASSERT_EQ(text.rfind(head, 0), 0u) << text;
    ASSERT_NE(end, std::string::npos) << text;
    const std::string kernel = text.substr(head.size(), end - head.size());
    EXPECT_EQ(kernel.rfind("E_", 0), 0u) << text;
    EXPECT_TRUE(is_kernel_name(kernel)) << text;
  }
  EXPECT_FALSE(y.is_realized());
  EXPECT_EQ(x.to_vector<float>(), kX);
  expect_values(y, {4}, {3, 5, 7, 9});

  // A copy's destination.
  Tensor c(std::vector<float>{5, 6}, {}, "cpu");
  Tensor moved = c.to("testdev");
  {
    TestDeviceFault fault("alloc");
    polygrad::Error e = realize_error(moved);
    EXPECT_NE(std::string(e.what()).find("realize: allocating buffer slot 0 of a copy to "
                                         "testdev:0: [alloc] testdev:0 (plugin test_host)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{5, 6}));
  expect_values(moved, {2}, {5, 6});
}

}  // namespace
