// One step of a realisation, ready to run: a compiled kernel with the memory and launch
// arguments of one schedule item, a device copy, or a host step (a collective). realize builds and
// runs them; a capture records them to run again (runtime/capture.hpp).
#ifndef POLYGRAD_RUNTIME_LAUNCH_HPP
#define POLYGRAD_RUNTIME_LAUNCH_HPP

#include "codegen/lower.hpp"
#include "schedule/schedule.hpp"

#include <polygrad/device.hpp>

#include <array>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace polygrad::runtime {

/// A kernel lowered and loaded on one device (the program cache holds one per AST and device).
struct CompiledKernel {
  UOpRef ast;  // keeps the cache key alive
  codegen::LoweredKernel lowered;
  /// Read through loaded_program (load_batch.hpp): a batch may still be building it.
  Program program;
  /// Set when a LoadBatch builds the program: complete once it is built (or failed).
  std::shared_future<void> loading;
};

struct Launch {
  enum class Kind { kernel, copy, host };
  Kind kind = Kind::kernel;
  std::string device;  ///< where it runs (a copy's destination)
  std::shared_ptr<CompiledKernel> kernel;
  /// The kernel's buffers in parameter order; for a copy {destination, source}. Holding them
  /// keeps the memory alive for as long as the launch can run.
  std::vector<std::shared_ptr<Buffer>> memory;
  std::vector<int64_t> scalars;
  std::array<uint32_t, 3> global{1, 1, 1};
  std::string source_device;  ///< a copy's source
  uint64_t nbytes = 0;        ///< a copy's size
  /// The id of the BUFFER it writes (slot 0; a copy's destination): running it counts a write
  /// of that buffer for the panel cache (note_packing_source_write).
  int64_t writes = 0;
  /// A host step's work over `memory` (a collective through a ccl plugin), run once `device`
  /// has finished the work launched before it.
  std::function<void(const std::vector<std::shared_ptr<Buffer>>& memory)> host;
};

/// A kernel item's launch without its memory: what stays the same every time it runs.
struct KernelLaunch {
  std::shared_ptr<CompiledKernel> kernel;
  std::vector<int64_t> scalars;
  std::array<uint32_t, 3> global{1, 1, 1};
};

/// The kernel of a kernel item (compiled on first use) and its launch arguments.
KernelLaunch prepare_kernel(const schedule::Item& item);

/// Changes whenever the program cache replaces an AST's program (a capture compiles it for its
/// sizes in place of a general kernel) or drops one: a kernel prepared before is then asked
/// for again, so every realize runs the program the cache holds now.
uint64_t program_generation();

/// The launch of `item` over `buffers` (BUFFER nodes in the item's slot order: its own, or a
/// bound schedule's counterparts; their memory is allocated on first use), running `kernel`
/// (empty for a copy).
Launch launch_over(const schedule::Item& item, std::span<const UOp* const> buffers,
                   KernelLaunch kernel);

/// The launch for a schedule item (compiles its kernel on first use, allocates its buffers).
Launch prepare_launch(const schedule::Item& item);

/// Runs it (enqueues; callers synchronise the devices they used). POLYGRAD_DEBUG=1 times it.
void execute(const Launch& launch);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_LAUNCH_HPP
