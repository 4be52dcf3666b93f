// Capture and replay of realisations (see capture.hpp).
#include "runtime/capture.hpp"

#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"

#include <polygrad/error.hpp>

#include <set>

namespace polygrad::runtime {

namespace {

thread_local std::shared_ptr<Capture> t_capture;

}  // namespace

void Capture::run() const {
  for (const Refill& r : refills_) {
    std::vector<unsigned char> bytes = r.fill();
    if (!bytes.empty()) device_handle(r.device).copy_in(*r.memory, bytes.data(), bytes.size());
  }
  std::set<std::string> used;
  for (const Launch& l : launches_) {
    execute(l);
    used.insert(l.device);
  }
  for (const std::string& d : used) device_handle(d).synchronize();
}

size_t Capture::kernel_count() const {
  size_t n = 0;
  for (const Launch& l : launches_) n += l.kind == Launch::Kind::kernel;
  return n;
}

void capture_begin() {
  if (t_capture) user_error("capture: a capture is already open on this thread");
  t_capture = std::make_shared<Capture>();
}

std::shared_ptr<Capture> capture_end() {
  if (!t_capture) user_error("capture: no capture is open on this thread");
  return std::exchange(t_capture, nullptr);
}

bool capturing() {
  return t_capture != nullptr;
}

void record(Launch launch) {
  if (!t_capture) internal_error("capture: record without an open capture");
  t_capture->launches_.push_back(std::move(launch));
}

void record_refill(const UOp* buffer, std::function<std::vector<unsigned char>()> fill) {
  if (!t_capture) internal_error("capture: record_refill without an open capture");
  t_capture->refills_.push_back({buffer_device(buffer), buffer_memory(buffer), std::move(fill)});
}

}  // namespace polygrad::runtime
