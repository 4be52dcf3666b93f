// The scheduler: cuts a tensor-level graph into kernels (rangeify).
//
// Every kernel computes one node into a contiguous buffer. Its AST (the codegen's input, see
// docs/compiler.md) is built by *indexing*: the output gets one RANGE per axis of extent > 1,
// and each node is asked for its value at an index vector; movement ops only transform the
// index (RESHAPE by flatten/unflatten, PERMUTE, EXPAND to 0, PAD with a validity gate, SHRINK
// by an offset, FLIP), elementwise ops combine the values of their sources, realised buffers
// LOAD. A REDUCE_AXIS opens fresh RANGEs for its reduced axes and becomes a REDUCE in the same
// kernel when its result depends on a prefix of the kernel's output ranges that includes the
// outermost one (softmax, layernorm: the reduce is per row and the codegen hoists it out of the
// inner loop), or on none of them in a kernel small enough to run serially on a CPU (a single
// row's softmax: the reduce runs once, before the outputs' loop); otherwise it is realised by
// a kernel of its own first. CONTIGUOUS, COPY and ASSIGN inside the graph are realised first
// too.
//
// Order: kernels are appended as the lowering needs them (read-after-write by construction);
// an ASSIGN's kernel then moves after every kernel that read the target's old contents
// (write-after-read) and stays after earlier writes of it (write-after-write).
#ifndef POLYGRAD_SCHEDULE_SCHEDULE_HPP
#define POLYGRAD_SCHEDULE_SCHEDULE_HPP

#include "codegen/lower.hpp"
#include "tensor/lazy.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace polygrad::schedule {

/// One step of a schedule.
struct Item {
  enum class Kind { kernel, copy };
  Kind kind = Kind::kernel;
  /// The device that runs it (a copy's destination device).
  std::string device;
  /// Kernel: its AST (a SINK, see docs/compiler.md). Copy: null.
  UOpRef ast;
  /// BUFFER nodes: for a kernel one per DEFINE_GLOBAL slot (slot 0 is written); for a copy
  /// {destination, source}.
  std::vector<UOpRef> buffers;
  /// Copy: bytes to copy.
  int64_t nbytes = 0;
  /// Kernel: values of the AST's DEFINE_VARs (its symbolic outer extent), by name.
  std::vector<std::pair<std::string, int64_t>> vars;
  /// A kernel that copies an input of the schedule (a weight) into panels for a matmul
  /// (codegen::panel_packing): the runtime keeps the copy for each version of the input and
  /// skips the kernel while the copy it holds is current (runtime/panel_cache.hpp).
  struct Packing {
    size_t source = 0;  ///< the slot of the input in `buffers`
    UOpRef group;       ///< the copy's first kernel: the copy's identity
    int part = 0;       ///< this kernel's index among the copy's (whole panels, a partial one)
  };
  std::optional<Packing> packing = {};
};

/// A schedule: its steps in run order, and the realised form of each root.
struct Schedule {
  std::vector<Item> items;
  std::vector<UOpRef> outputs;  ///< RESHAPE(BUFFER, shape) per root
  /// Buffers created for intermediates (not roots): the memory planner may share their memory.
  std::vector<UOpRef> intermediates;
};

/// Creates a BUFFER node of (dtype, count) on the named device (COPY destinations).
using DeviceBufferFactory =
    std::function<UOpRef(const std::string& device, DType dtype, int64_t count)>;
/// The device of a BUFFER node.
using BufferDevice = std::function<std::string(const UOp* buffer)>;

/// The codegen target of a device (its plugin's capabilities).
using DeviceTarget = std::function<codegen::Target(const std::string& device)>;

struct Context {
  std::string device;  ///< where kernels run
  DeviceBufferFactory new_buffer;
  BufferDevice buffer_device;
  /// For layout choices that depend on the target (a matmul operand read from a copy in
  /// column panels, codegen::panel_packing); none are made when empty.
  DeviceTarget target;
};

/// The schedule that realises `roots`.
Schedule make_schedule(const std::vector<UOpRef>& roots, const Context& ctx);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_SCHEDULE_HPP
