// Collectives on tensors over a Communicator (polygrad/ccl.hpp): the input is realised into a
// contiguous buffer, the device's work is finished, and the ccl plugin writes a fresh buffer
// that becomes the result. Inputs are never written, so lazy readers of them are unaffected.
#include "runtime/buffers.hpp"
#include "runtime/capture.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/ccl.hpp>

#include <mutex>
#include <vector>

namespace polygrad {

namespace {

/// x realised into a buffer of exactly its elements, row-major: the tensor, memory, device.
struct Source {
  Tensor tensor;
  std::shared_ptr<Buffer> memory;
  Device device;
};

Source realise(const char* op, const Tensor& x) {
  detail::state(x, op);
  if (runtime::capturing())
    user_error(std::string("[") + op +
               "] a collective cannot be captured: it exchanges data with other processes "
               "when it is called (run it outside the capture)");
  // A realised tensor is its whole buffer already: read it in place (contiguous() would copy).
  Tensor t = x;
  if (!lazy::is_realized(t.impl()->uop.get()) ||
      lazy::buffer_count(lazy::realized_buffer(t.impl()->uop.get())) != x.numel())
    t = x.contiguous();
  t.realize();
  const UOp* buf = lazy::realized_buffer(t.impl()->uop.get());
  if (lazy::buffer_count(buf) != x.numel())
    internal_error(std::string("[") + op + "] the realised input does not fill its buffer");
  Device device = runtime::device_handle(runtime::buffer_device(buf));
  std::shared_ptr<Buffer> memory = runtime::buffer_memory(buf);
  device.synchronize();  // the ccl plugin reads what the kernels wrote
  return Source{std::move(t), std::move(memory), std::move(device)};
}

/// A new realised tensor of `shape` on x's device, and its memory for the plugin to write.
std::pair<Tensor, std::shared_ptr<Buffer>> result(const Tensor& x, const lazy::Shape& shape) {
  const std::string& device = x.impl()->device;
  const int64_t n = lazy::numel(shape);
  UOpRef buf = runtime::new_buffer(device, detail::dt(x), n);
  std::shared_ptr<Buffer> memory = runtime::buffer_memory(buf.get());
  return {detail::make(lazy::reshape(buf, shape), shape, device), std::move(memory)};
}

/// Runs one collective over `send` and `recv`. When it fails for want of its peers the
/// transport may still touch both later (an abandoned operation completes if a late peer
/// arrives), so their memory is kept to the end of the process.
template <class Fn>
void run_collective(const std::shared_ptr<Buffer>& send, const std::shared_ptr<Buffer>& recv,
                    Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.status() == PG_ERR_PEER || e.status() == PG_ERR_TIMEOUT) {
      static auto* abandoned = new std::vector<std::shared_ptr<Buffer>>();  // never freed
      static std::mutex mutex;
      std::lock_guard lock(mutex);
      abandoned->push_back(send);
      abandoned->push_back(recv);
    }
    throw;
  }
}

void check_reduce(const char* op, const Tensor& x, ReduceOp reduce) {
  const int r = static_cast<int>(reduce);
  if (r != PG_CCL_SUM && r != PG_CCL_MAX && r != PG_CCL_MEAN)
    user_error(std::string("[") + op + "] unknown reduction " + std::to_string(r));
  if (reduce == ReduceOp::mean && !detail::dt(x).is_float())
    user_error(std::string("[") + op + "] mean needs a floating-point tensor, not " +
               dtype_name(x.dtype()));
}

}  // namespace

Tensor all_reduce(const Communicator& comm, const Tensor& x, ReduceOp op) {
  check_reduce("all_reduce", x, op);
  Source src = realise("all_reduce", x);
  auto [out, memory] = result(x, x.shape());
  if (x.numel() == 0) return out;
  run_collective(src.memory, memory, [&] {
    comm.all_reduce(Communicator::describe(src.device, *src.memory),
                    Communicator::describe(src.device, *memory), static_cast<uint64_t>(x.numel()),
                    x.dtype(), op);
  });
  return out;
}

void all_reduce_inplace(const Communicator& comm, Tensor& x, ReduceOp op) {
  check_reduce("all_reduce_inplace", x, op);
  x.realize();  // x itself holds its buffer from now on
  Source src = realise("all_reduce_inplace", x);
  if (x.numel() == 0) return;
  const pg_ccl_buffer both = Communicator::describe(src.device, *src.memory);
  run_collective(src.memory, src.memory, [&] {
    comm.all_reduce(both, both, static_cast<uint64_t>(x.numel()), x.dtype(), op);
  });
}

Tensor broadcast(const Communicator& comm, const Tensor& x, int root) {
  Source src = realise("broadcast", x);
  auto [out, memory] = result(x, x.shape());
  if (x.numel() == 0) return out;
  run_collective(src.memory, memory, [&] {
    comm.broadcast(Communicator::describe(src.device, *src.memory),
                   Communicator::describe(src.device, *memory), static_cast<uint64_t>(x.numel()),
                   x.dtype(), root);
  });
  return out;
}

Tensor all_gather(const Communicator& comm, const Tensor& x) {
  Source src = realise("all_gather", x);
  lazy::Shape shape = x.shape();
  shape.insert(shape.begin(), comm.world_size());
  auto [out, memory] = result(x, shape);
  if (x.numel() == 0) return out;
  run_collective(src.memory, memory, [&] {
    comm.all_gather(Communicator::describe(src.device, *src.memory),
                    Communicator::describe(src.device, *memory), static_cast<uint64_t>(x.numel()),
                    x.dtype());
  });
  return out;
}

Tensor reduce_scatter(const Communicator& comm, const Tensor& x, ReduceOp op) {
  check_reduce("reduce_scatter", x, op);
  lazy::Shape shape = x.shape();
  if (shape.empty() || shape[0] % comm.world_size() != 0)
    user_error("[reduce_scatter] the first axis of a tensor of shape " + lazy::shape_str(shape) +
               " does not divide into " + std::to_string(comm.world_size()) + " equal blocks");
  Source src = realise("reduce_scatter", x);
  shape[0] /= comm.world_size();
  auto [out, memory] = result(x, shape);
  const int64_t block = lazy::numel(shape);
  if (block == 0) return out;
  run_collective(src.memory, memory, [&] {
    comm.reduce_scatter(Communicator::describe(src.device, *src.memory),
                        Communicator::describe(src.device, *memory), static_cast<uint64_t>(block),
                        x.dtype(), op);
  });
  return out;
}

}  // namespace polygrad
