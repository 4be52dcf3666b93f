// Which device each step of a schedule runs on, and where its buffers live, for graphs whose
// data moves between devices (no device needed: buffers are fake nodes with a device each).
// A kernel runs on its operands' device: the COPY it reads from (the copy's destination) or
// the buffers it reads, never the device of a copy's source.
#include "graphs.hpp"
#include "schedule/schedule.hpp"

#include <gtest/gtest.h>

#include <map>

namespace polygrad {
namespace {

using lazy::Shape;

class SchedulePlacement : public ::testing::Test {
 protected:
  SchedulePlacement() {
    ctx_.device = "cpu:0";
    ctx_.new_buffer = [this](const std::string& device, DType t, int64_t n) {
      return buffer(device, t, n);
    };
    ctx_.buffer_device = [this](const UOp* b) { return device_.at(lazy::buffer_id(b)); };
  }
  UOpRef buffer(const std::string& device, DType t, int64_t n) {
    device_[next_id_] = device;
    return lazy::buffer(t, n, next_id_++);
  }
  UOpRef input(const std::string& device, const Shape& s) {
    return lazy::reshape(buffer(device, dtypes::float32, lazy::numel(s)), s);
  }
  /// The device of the buffer behind a schedule output.
  std::string output_device(const UOpRef& out) {
    return device_.at(lazy::buffer_id(lazy::realized_buffer(out.get())));
  }
  /// "copy@dev" or "kernel@dev" per item, in run order.
  static std::vector<std::string> steps(const schedule::Schedule& s) {
    std::vector<std::string> out;
    for (const schedule::Item& it : s.items)
      out.push_back((it.kind == schedule::Item::Kind::copy ? "copy@" : "kernel@") + it.device);
    return out;
  }

  schedule::Context ctx_;
  std::map<int64_t, std::string> device_;
  int64_t next_id_ = 1000;
};

UOpRef times(const UOpRef& x, double v, const Shape& s) {
  return testgraph::ew(Op::MUL, x, testgraph::scalar_like(x, v, s));
}

// x.to("cpu") * 2 of an x on another device: the multiply runs on cpu, into a cpu buffer (it
// ran on the source's device, whose buffer came first in sources-first order).
TEST_F(SchedulePlacement, AKernelAfterACopyRunsOnTheCopysDevice) {
  UOpRef x = input("testdev:0", {3});
  schedule::Schedule s = schedule::make_schedule({times(lazy::copy_to(x, "cpu:0"), 2, {3})}, ctx_);
  EXPECT_EQ(steps(s), (std::vector<std::string>{"copy@cpu:0", "kernel@cpu:0"}));
  EXPECT_EQ(output_device(s.outputs[0]), "cpu:0");
  for (const UOpRef& b : s.items[1].buffers)
    EXPECT_EQ(device_.at(lazy::buffer_id(b.get())), "cpu:0");
}

// x on cpu, y = x.to(testdev) * 2, z = y.to(cpu) + x.
TEST_F(SchedulePlacement, DataMovingBothWays) {
  UOpRef x = input("cpu:0", {3});
  UOpRef y = times(lazy::copy_to(x, "testdev:0"), 2, {3});
  UOpRef z = testgraph::ew(Op::ADD, lazy::copy_to(y, "cpu:0"), x);
  schedule::Schedule s = schedule::make_schedule({z}, ctx_);
  EXPECT_EQ(steps(s), (std::vector<std::string>{"copy@testdev:0", "kernel@testdev:0", "copy@cpu:0",
                                                "kernel@cpu:0"}));
  EXPECT_EQ(output_device(s.outputs[0]), "cpu:0");
  // Realised on its own device, y's kernel writes a testdev buffer.
  ctx_.device = "testdev:0";
  schedule::Schedule sy = schedule::make_schedule({y}, ctx_);
  EXPECT_EQ(steps(sy), (std::vector<std::string>{"copy@testdev:0", "kernel@testdev:0"}));
  EXPECT_EQ(output_device(sy.outputs[0]), "testdev:0");
}

// A CONTIGUOUS inside the graph, fed by a copy: realised on the copy's device.
TEST_F(SchedulePlacement, AnIntermediateAfterACopyRunsOnTheCopysDevice) {
  UOpRef x = input("testdev:1", {4});
  UOpRef mid = lazy::contiguous(times(lazy::copy_to(x, "cpu:0"), 3, {4}));
  schedule::Schedule s = schedule::make_schedule({times(mid, 0.5, {4})}, ctx_);
  EXPECT_EQ(steps(s), (std::vector<std::string>{"copy@cpu:0", "kernel@cpu:0", "kernel@cpu:0"}));
}

// Constants alone have no device of their own: they compute where the roots are realised.
TEST_F(SchedulePlacement, ConstantsComputeWhereTheRootsAre) {
  ctx_.device = "testdev:0";
  schedule::Schedule s = schedule::make_schedule({lazy::full(dtypes::float32, 1.5, {2, 2})}, ctx_);
  EXPECT_EQ(steps(s), (std::vector<std::string>{"kernel@testdev:0"}));
  EXPECT_EQ(output_device(s.outputs[0]), "testdev:0");
}

}  // namespace
}  // namespace polygrad
