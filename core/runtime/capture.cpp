// Capture and replay of realisations (see capture.hpp).
#include "runtime/capture.hpp"

#include "runtime/buffers.hpp"
#include "runtime/runtime.hpp"
#include "tensor/lazy.hpp"

#include <polygrad/error.hpp>

#include <map>
#include <set>

namespace polygrad::runtime {

namespace {

thread_local std::shared_ptr<Capture> t_capture;

}  // namespace

void Capture::run() const {
  run({}, {});
}

void Capture::run(const std::vector<const UOp*>& inputs,
                  const std::vector<const UOp*>& replacements) const {
  if (inputs.size() != replacements.size())
    internal_error("capture: inputs and replacements differ in number");  // Captured checks
  std::map<const Buffer*, std::shared_ptr<Buffer>> swap;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const UOp* a = inputs[i];
    const UOp* b = replacements[i];
    const int64_t na = lazy::buffer_count(a), nb = lazy::buffer_count(b);
    if (a->dtype() != b->dtype() || na != nb || buffer_device(a) != buffer_device(b))
      user_error("capture: replacement " + std::to_string(i) + " is " + std::to_string(nb) + " x " +
                 b->dtype().name() + " on " + buffer_device(b) + ", the input was " +
                 std::to_string(na) + " x " + a->dtype().name() + " on " + buffer_device(a));
    swap[buffer_memory(a).get()] = buffer_memory(b);
  }
  for (const Refill& r : refills_) {
    std::vector<unsigned char> bytes = r.fill();
    if (!bytes.empty()) device_handle(r.device).copy_in(*r.memory, bytes.data(), bytes.size());
  }
  std::set<std::string> used;
  for (const Launch& l : launches_) {
    if (swap.empty()) {
      execute(l);
    } else {
      Launch swapped = l;
      for (auto& m : swapped.memory)
        if (auto it = swap.find(m.get()); it != swap.end()) m = it->second;
      execute(swapped);
    }
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
