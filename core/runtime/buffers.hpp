// The runtime's table of device memory behind BUFFER nodes, keyed by the node's id. An entry
// lives as long as its BUFFER node; memory is allocated on first use.
#ifndef POLYGRAD_RUNTIME_BUFFERS_HPP
#define POLYGRAD_RUNTIME_BUFFERS_HPP

#include "codegen/lower.hpp"
#include "ir/uop.hpp"

#include <polygrad/device.hpp>

#include <memory>
#include <string>

namespace polygrad::runtime {

/// The Device for a canonical name (opened once, cached).
Device device_handle(const std::string& canonical);

/// What codegen plans with for that device: its capabilities, its kernel ISA (the lower of the
/// host's and the plugin's) and its name.
codegen::Target device_target(const std::string& canonical);

/// Device memory of a BUFFER node, allocated on first call.
std::shared_ptr<Buffer> buffer_memory(const UOp* buffer);

/// Make `buffer` use `memory` (the memory planner shares one allocation between intermediates
/// whose lifetimes do not overlap). `memory` must be at least as large.
void alias_buffer(const UOp* buffer, std::shared_ptr<Buffer> memory);

/// Whether the buffer has memory yet.
bool buffer_allocated(const UOp* buffer);

/// Whether the buffer is host memory the caller may change without polygrad seeing it
/// (from_host_memory): no copy of it may be kept.
bool buffer_external(const UOp* buffer);

/// Marks the buffer as such host memory.
void mark_buffer_external(const UOp* buffer);

/// Number of live buffer entries (tests check that they are released).
size_t live_buffer_count();

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_BUFFERS_HPP
