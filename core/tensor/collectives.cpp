// Collectives on tensors over a Communicator (polygrad/ccl.hpp): the input is realised into a
// contiguous buffer, the device's work is finished, and the ccl plugin writes a fresh buffer
// that becomes the result. Inputs are never written, so lazy readers of them are unaffected.
// Each collective is a host step of the realisation (runtime::Launch::Kind::host): run at once,
// or, while a capture records, recorded in order with the kernels and run at every replay.
#include "runtime/buffers.hpp"
#include "runtime/capture.hpp"
#include "runtime/launch.hpp"
#include "runtime/runtime.hpp"
#include "tensor/tensor_impl.hpp"

#include <polygrad/ccl.hpp>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace polygrad {

namespace {

/// x realised into a buffer of exactly its elements, row-major: the tensor, memory, device.
struct Source {
  Tensor tensor;
  std::shared_ptr<Buffer> memory;
  Device device;
  std::string device_name;
  int64_t buffer_id = 0;
};

Source realise(const char* op, const Tensor& x) {
  detail::state(x, op);
  // A realised tensor is its whole buffer already: read it in place (contiguous() would copy).
  Tensor t = x;
  if (!lazy::is_realized(t.impl()->uop.get()) ||
      lazy::buffer_count(lazy::realized_buffer(t.impl()->uop.get())) != x.numel())
    t = x.contiguous();
  t.realize();
  const UOp* buf = lazy::realized_buffer(t.impl()->uop.get());
  if (lazy::buffer_count(buf) != x.numel())
    internal_error(std::string("[") + op + "] the realised input does not fill its buffer");
  const std::string name = runtime::buffer_device(buf);
  Device device = runtime::device_handle(name);
  std::shared_ptr<Buffer> memory = runtime::buffer_memory(buf);
  return Source{std::move(t), std::move(memory), std::move(device), name, lazy::buffer_id(buf)};
}

/// A new realised tensor of `shape` on x's device, its memory for the plugin to write, and its
/// buffer's id.
struct Result {
  Tensor tensor;
  std::shared_ptr<Buffer> memory;
  int64_t buffer_id = 0;
};

Result result(const Tensor& x, const lazy::Shape& shape) {
  const std::string& device = x.impl()->device;
  const int64_t n = lazy::numel(shape);
  UOpRef buf = runtime::new_buffer(device, detail::dt(x), n);
  std::shared_ptr<Buffer> memory = runtime::buffer_memory(buf.get());
  const int64_t id = lazy::buffer_id(buf.get());
  return {detail::make(lazy::reshape(buf, shape), shape, device), std::move(memory), id};
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

using Call = std::function<void(const pg_ccl_buffer& send, const pg_ccl_buffer& recv)>;

/// The collective `call(send, recv)` from `src` into `recv` (of buffer `writes`) as a host step:
/// run now, or recorded by the capture open on this thread (a replay runs it again, over the
/// memory it then binds: replacements of captured inputs included).
void step(const Source& src, std::shared_ptr<Buffer> recv, int64_t writes, Call call) {
  runtime::Launch l;
  l.kind = runtime::Launch::Kind::host;
  l.device = src.device_name;
  l.memory = {src.memory, std::move(recv)};
  l.writes = writes;
  l.host = [device = src.device,
            call = std::move(call)](const std::vector<std::shared_ptr<Buffer>>& memory) {
    run_collective(memory[0], memory[1], [&] {
      call(Communicator::describe(device, *memory[0]), Communicator::describe(device, *memory[1]));
    });
  };
  if (runtime::capturing())
    runtime::record(std::move(l));
  else
    runtime::execute(l);
}

void check_reduce(const char* op, const Tensor& x, ReduceOp reduce) {
  const int r = static_cast<int>(reduce);
  if (r != PG_CCL_SUM && r != PG_CCL_MAX && r != PG_CCL_MEAN)
    user_error(std::string("[") + op + "] unknown reduction " + std::to_string(r));
  if (reduce == ReduceOp::mean && !detail::dt(x).is_float())
    user_error(std::string("[") + op + "] mean needs a floating-point tensor, not " +
               dtype_name(x.dtype()));
}

/// The collective `call` from x (realised for `op`) into a new tensor of `shape`; none runs
/// when its element count `n` is 0.
Tensor into_new(const char* op, const Tensor& x, const lazy::Shape& shape, uint64_t n, Call call) {
  Source src = realise(op, x);
  Result out = result(x, shape);
  if (n == 0) return out.tensor;
  step(src, out.memory, out.buffer_id, std::move(call));
  return out.tensor;
}

}  // namespace

Tensor all_reduce(const Communicator& comm, const Tensor& x, ReduceOp op) {
  check_reduce("all_reduce", x, op);
  const auto n = static_cast<uint64_t>(x.numel());
  return into_new(
      "all_reduce", x, x.shape(), n,
      [comm, n, dtype = x.dtype(), op](const pg_ccl_buffer& send, const pg_ccl_buffer& recv) {
        comm.all_reduce(send, recv, n, dtype, op);
      });
}

void all_reduce_inplace(const Communicator& comm, Tensor& x, ReduceOp op) {
  check_reduce("all_reduce_inplace", x, op);
  x.realize();  // x itself holds its buffer from now on
  Source src = realise("all_reduce_inplace", x);
  if (x.numel() == 0) return;
  const auto n = static_cast<uint64_t>(x.numel());
  // (in place: the plugin gets the same memory as send and recv)
  step(src, src.memory, src.buffer_id,
       [comm, n, dtype = x.dtype(), op](const pg_ccl_buffer& send, const pg_ccl_buffer&) {
         comm.all_reduce(send, send, n, dtype, op);
       });
}

Tensor broadcast(const Communicator& comm, const Tensor& x, int root) {
  const auto n = static_cast<uint64_t>(x.numel());
  return into_new(
      "broadcast", x, x.shape(), n,
      [comm, n, dtype = x.dtype(), root](const pg_ccl_buffer& send, const pg_ccl_buffer& recv) {
        comm.broadcast(send, recv, n, dtype, root);
      });
}

Tensor all_gather(const Communicator& comm, const Tensor& x) {
  lazy::Shape shape = x.shape();
  shape.insert(shape.begin(), comm.world_size());
  const auto n = static_cast<uint64_t>(x.numel());
  return into_new(
      "all_gather", x, shape, n,
      [comm, n, dtype = x.dtype()](const pg_ccl_buffer& send, const pg_ccl_buffer& recv) {
        comm.all_gather(send, recv, n, dtype);
      });
}

Tensor reduce_scatter(const Communicator& comm, const Tensor& x, ReduceOp op) {
  check_reduce("reduce_scatter", x, op);
  lazy::Shape shape = x.shape();
  if (shape.empty() || shape[0] % comm.world_size() != 0)
    user_error("[reduce_scatter] the first axis of a tensor of shape " + lazy::shape_str(shape) +
               " does not divide into " + std::to_string(comm.world_size()) + " equal blocks");
  shape[0] /= comm.world_size();
  const auto n = static_cast<uint64_t>(lazy::numel(shape));
  return into_new(
      "reduce_scatter", x, shape, n,
      [comm, n, dtype = x.dtype(), op](const pg_ccl_buffer& send, const pg_ccl_buffer& recv) {
        comm.reduce_scatter(send, recv, n, dtype, op);
      });
}

}  // namespace polygrad
