// Collectives across the devices of one process, without any ccl plugin: all_reduce_devices
// reduces tensors that live on different devices (of one plugin or several: cpu and emu, two
// cpu devices, two GPUs) and gives every device the result. It is written in the tensor API,
// so the copies between devices (Tensor::to) and the reductions are kernels and copies the
// scheduler runs like any other:
// - naive: every tensor is copied to the first device and reduced there, and the result is
//   copied back to each of the others (2 (n-1) whole-tensor copies through one device);
// - ring: the flattened tensor is cut into n chunks; n-1 reduce-scatter steps pass chunk
//   (i - s) mod n from device i to device i+1, which folds it into its own, so device i ends
//   with the full reduction of chunk (i + 1) mod n; n-1 all-gather steps then pass the finished
//   chunks around the ring. Each device sends and receives 2 (n-1)/n of the tensor.
#ifndef POLYGRAD_DEVICE_COLLECTIVES_HPP
#define POLYGRAD_DEVICE_COLLECTIVES_HPP

#include <polygrad/ccl.hpp>
#include <polygrad/export.hpp>
#include <polygrad/tensor.hpp>

#include <cstdint>
#include <vector>

namespace polygrad {

/// How all_reduce_devices moves the data.
enum class DeviceReduce { automatic, naive, ring };

/// Tensors of at least this many bytes take the ring under DeviceReduce::automatic.
inline constexpr uint64_t kRingBytes = uint64_t{1} << 20;

/// `tensors` (one per device, all of one shape and dtype) reduced with `op` (`mean`: floating
/// point only): one realised result per input, on the input's device, in order. The inputs are
/// not written. `automatic` takes the ring from `ring_bytes` up (and when every chunk has an
/// element), the naive reduction below. Errors name the argument at fault.
POLYGRAD_API std::vector<Tensor> all_reduce_devices(
    const std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::sum,
    DeviceReduce algorithm = DeviceReduce::automatic, uint64_t ring_bytes = kRingBytes);

}  // namespace polygrad

#endif  // POLYGRAD_DEVICE_COLLECTIVES_HPP
