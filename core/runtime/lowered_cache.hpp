// The lowered-program disk cache: what codegen::lower made of a kernel AST for a target, kept
// on disk so that a later process skips lowering (a warm process's first call otherwise spends
// most of its host time there). It sits beside the plugins' own caches of compiled objects and
// keeps their rules (sdk/include/polygrad/disk_cache.hpp): a private directory, entries
// written to a temporary file and renamed into place, each checked (magic, key, size,
// SHA-256) on read; an entry that does not check out is ignored and rewritten.
//
// The key is the SHA-256 of the AST written out node by node (op, dtype, arg bit for bit,
// sources by position in toposort order), the target (its capabilities and ISA) and this
// build of libpolygrad (its file's path, size and modification time, so that a rebuilt library
// never reads a program another build lowered). An entry holds the program: name, ISA,
// instructions, operands, buffer count, variables, launch sizes (expressions over the
// variables, written node by node like the key's AST).
//
// POLYGRAD_PROGRAM_CACHE names the directory (default $XDG_CACHE_HOME/polygrad/programs or
// ~/.cache/polygrad/programs); `off` (or `0`, `false`, `no`) turns the cache off. The directory
// is bounded: beyond 4096 entries or 64 MiB, the oldest entries go first. Its warnings (a
// refused directory, an entry that does not check out) go to stderr: the compiler library has
// no access to the host's log, which lives in libpolygrad's plugin layer.
#ifndef POLYGRAD_RUNTIME_LOWERED_CACHE_HPP
#define POLYGRAD_RUNTIME_LOWERED_CACHE_HPP

#include "codegen/lower.hpp"

#include <array>
#include <cstdint>

namespace polygrad::runtime {

/// codegen::lower(ast, target), through the disk cache when it is on.
codegen::LoweredKernel lower_cached(const UOpRef& ast, const codegen::Target& target);

/// The cache key of `ast` lowered for `target` (the capabilities field by field, each tensor
/// core's fragment maps by content: a plugin loaded at another address keys the same).
std::array<uint8_t, 32> lowered_cache_key(const UOpRef& ast, const codegen::Target& target);

}  // namespace polygrad::runtime

#endif  // POLYGRAD_RUNTIME_LOWERED_CACHE_HPP
