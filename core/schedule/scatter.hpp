// A one-hot sum over an output axis (an embedding's or gather's gradient) as a scatter-add.
#ifndef POLYGRAD_SCHEDULE_SCATTER_HPP
#define POLYGRAD_SCHEDULE_SCATTER_HPP

#include "ir/uop.hpp"

#include <optional>
#include <vector>

namespace polygrad::schedule {

/// The rows a scatter kernel's innermost output range is split into blocks of (one vector of
/// float32 on AVX2), so that range loops innermost and stays contiguous.
inline constexpr int64_t kScatterBlock = 8;

/// A reduce body of the form where(e == v, x, 0) (perhaps cast) over the reduced `ranges`,
/// v a range they do not include (an output range) and e an int they move and v does not.
struct OneHotSum {
  const UOp* v = nullptr;
  UOpRef e;
  UOpRef where;  ///< the WHERE
  bool cast_back = false;
};

/// The one-hot form of a reduce's body `value` with op `op` over `ranges`, when it has one and
/// sums a float32, float64 or int.
std::optional<OneHotSum> one_hot_over_output(const UOpRef& value, const std::vector<UOpRef>& ranges,
                                             Op op);

/// `ast` (a kernel built by KernelBuilder, every range of a constant extent) when it stores
/// out[..., v, ...] = sum over ranges R of where(e == v, x, 0), v an output range and e an int
/// that R moves and v does not: out[..., e, ...] += x as a loop over R, for every other output
/// position. Each launch step owns its positions of the other output ranges (the outermost is
/// launched), so its read-modify-writes are sequential: R loops inside them, the innermost
/// other range (split in blocks of kScatterBlock when it divides) innermost of all. An e
/// outside 0..extent(v)-1 adds nothing, as the one-hot sum gave 0. The output must be zeroed
/// first. Float32, float64 and int sums only; null when `ast` is not of that form, or has no
/// other output range to launch over.
UOpRef scatter_form(const UOpRef& ast);

}  // namespace polygrad::schedule

#endif  // POLYGRAD_SCHEDULE_SCATTER_HPP
