// Capture: record the kernels a piece of code would run, then run them again and again without
// building graphs or scheduling (tinygrad's TinyJit, CUDA graphs).
//
//   Tensor loss;  // x: a tensor over host memory (Tensor::from_host_memory), w: a parameter
//   polygrad::Captured step = polygrad::capture([&] {
//     loss = (x.matmul(w) - y).square().mean();
//     loss.backward();
//     w.assign(w.detach() - *w.grad() * 0.1);
//     std::vector<Tensor> out{loss, w};
//     Tensor::realize_all(out);
//   });
//   for (...) { write the next batch into x's memory; step.run(); read loss.item(); }
//
// While `fn` runs, every realisation on this thread is scheduled and compiled but not run; its
// launches are recorded together with the memory of every buffer they touch. Reading values
// back to the host inside `fn` is an error (nothing has run yet). Each run() launches the
// recording over the same memory: inputs written in place (tensors over host memory, assign)
// are read anew, random tensors drawn inside `fn` are drawn again, and everything else in `fn`
// (Python or C++ control flow, constants such as a learning rate) is fixed at capture time.
#ifndef POLYGRAD_CAPTURE_HPP
#define POLYGRAD_CAPTURE_HPP

#include <polygrad/export.hpp>
#include <polygrad/tensor.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace polygrad {

namespace runtime {
class Capture;
}

class POLYGRAD_API Captured {
 public:
  Captured() = default;
  /// Runs the recorded launches in order and waits for them.
  void run() const;
  /// Runs them with `replacements[i]` (realised first; same shape, dtype and device) in place
  /// of `inputs[i]`, a realised tensor the captured code read: new inputs without a copy, as
  /// tinygrad's JIT takes new input tensors. An input given twice takes one replacement (two
  /// different ones are an error).
  void run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& replacements) const;
  /// Kernel launches per run.
  size_t kernel_count() const;
  bool defined() const { return impl_ != nullptr; }
  /// Wraps a recording of the runtime (the C API's pg_capture_end).
  static Captured adopt(std::shared_ptr<const runtime::Capture> recording);

 private:
  std::shared_ptr<const runtime::Capture> impl_;
};

/// Runs `fn` with this thread's realisations recorded instead of run (see above). If `fn`
/// throws, the capture is dropped and the exception propagates. Captures do not nest.
POLYGRAD_API Captured capture(const std::function<void()>& fn);

}  // namespace polygrad

#endif  // POLYGRAD_CAPTURE_HPP
