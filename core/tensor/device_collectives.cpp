// all_reduce_devices (polygrad/device_collectives.hpp): the naive reduction and the ring, in
// the tensor API.
#include "tensor/tensor_impl.hpp"

#include <polygrad/device_collectives.hpp>
#include <polygrad/error.hpp>

#include <string>
#include <utility>

namespace polygrad {

namespace {

constexpr const char* kOp = "all_reduce_devices: ";

Tensor combine(const Tensor& a, const Tensor& b, ReduceOp op) {
  return op == ReduceOp::max ? a.maximum(b) : a + b;
}

std::string describe(const Tensor& t) {
  return dtype_name(t.dtype()) + " " + lazy::shape_str(t.shape());
}

void check(const std::vector<Tensor>& tensors, ReduceOp op) {
  if (op != ReduceOp::sum && op != ReduceOp::max && op != ReduceOp::mean)
    user_error(std::string(kOp) + "reduction " + std::to_string(static_cast<int>(op)) +
               ": expected sum, max or mean");
  if (tensors.empty()) user_error(std::string(kOp) + "no tensors");
  const Tensor& first = tensors[0];
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) user_error(std::string(kOp) + "tensor " + std::to_string(i) + " is empty");
    if (t.shape() != first.shape() || t.dtype() != first.dtype())
      user_error(std::string(kOp) + "tensor " + std::to_string(i) + " on " + t.device() + " is " +
                 describe(t) + ", tensor 0 on " + first.device() + " is " + describe(first) +
                 ": every tensor must have the same shape and dtype");
  }
  if (op == ReduceOp::mean && !detail::dt(first).is_float())
    user_error(std::string(kOp) + "mean needs a floating-point dtype, not " +
               dtype_name(first.dtype()));
}

std::vector<Tensor> naive(const std::vector<Tensor>& flats, ReduceOp op) {
  const std::string& home = flats[0].device();
  Tensor acc = flats[0];
  for (size_t i = 1; i < flats.size(); ++i) acc = combine(acc, flats[i].to(home), op);
  std::vector<Tensor> out{acc};
  for (size_t i = 1; i < flats.size(); ++i) out.push_back(acc.to(flats[i].device()));
  return out;
}

std::vector<Tensor> ring(const std::vector<Tensor>& flats, ReduceOp op) {
  const size_t n = flats.size();
  const int64_t total = flats[0].numel();
  std::vector<int64_t> bounds;
  for (size_t k = 0; k <= n; ++k)
    bounds.push_back(total * static_cast<int64_t>(k) / static_cast<int64_t>(n));
  // chunks[i][c]: device i's current value of chunk c (lazy tensors on device i).
  std::vector<std::vector<Tensor>> chunks(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < n; ++c)
      chunks[i].push_back(flats[i].shrink({{bounds[c], bounds[c + 1]}}));
  auto next = [n](size_t i) { return (i + 1) % n; };
  for (size_t s = 0; s + 1 < n; ++s) {  // reduce-scatter: device i sends chunk (i - s) mod n
    std::vector<Tensor> moved;
    for (size_t i = 0; i < n; ++i)
      moved.push_back(chunks[i][(i + n - s) % n].to(flats[next(i)].device()));
    for (size_t i = 0; i < n; ++i) {
      Tensor& mine = chunks[next(i)][(i + n - s) % n];
      mine = combine(mine, moved[i], op);
    }
  }
  for (size_t s = 0; s + 1 < n; ++s) {  // all-gather: device i holds finished chunk (i+1-s) mod n
    std::vector<Tensor> moved;
    for (size_t i = 0; i < n; ++i)
      moved.push_back(chunks[i][(i + 1 + n - s) % n].to(flats[next(i)].device()));
    for (size_t i = 0; i < n; ++i) chunks[next(i)][(i + 1 + n - s) % n] = moved[i];
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Tensor::cat(chunks[i], 0));
  return out;
}

}  // namespace

std::vector<Tensor> all_reduce_devices(const std::vector<Tensor>& tensors, ReduceOp op,
                                       DeviceReduce algorithm, uint64_t ring_bytes) {
  check(tensors, op);
  const size_t n = tensors.size();
  const Tensor& first = tensors[0];
  const uint64_t bytes = static_cast<uint64_t>(first.numel() * first.element_size());
  if (algorithm == DeviceReduce::automatic)
    algorithm = bytes >= ring_bytes ? DeviceReduce::ring : DeviceReduce::naive;
  std::vector<Tensor> flats;
  for (const Tensor& t : tensors) flats.push_back(t.reshape({t.numel()}));
  std::vector<Tensor> out;
  if (n == 1)
    out = {flats[0].contiguous()};
  else if (algorithm == DeviceReduce::ring && first.numel() >= static_cast<int64_t>(n))
    out = ring(flats, op);  // (fewer elements than devices: some chunk would be empty)
  else
    out = naive(flats, op);
  for (Tensor& x : out) {
    if (op == ReduceOp::mean) x = x / static_cast<double>(n);
    x = x.reshape(first.shape());
  }
  Tensor::realize_all(out);
  return out;
}

}  // namespace polygrad
