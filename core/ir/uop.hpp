// UOp: the immutable, hash-consed node of polygrad's IR, and UOpRef, its counted handle.
//
// Building the same (op, dtype, sources, arg) twice yields the same node, so pointer equality is
// structural equality. Nodes live in a global sharded intern table; a node is removed from it
// and freed when its last UOpRef dies. Building and releasing are safe from any thread.
#ifndef POLYGRAD_IR_UOP_HPP
#define POLYGRAD_IR_UOP_HPP

#include "ir/arg.hpp"
#include "ir/dtype.hpp"
#include "ir/ops.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace polygrad {

class UOp;

/// Counted handle to a UOp. Copying increments the node's count, destruction decrements it;
/// equality is node identity (and thus structural equality). A default UOpRef is null.
class UOpRef {
 public:
  UOpRef() = default;
  UOpRef(const UOpRef& o) noexcept;
  UOpRef(UOpRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  UOpRef& operator=(const UOpRef& o) noexcept;
  UOpRef& operator=(UOpRef&& o) noexcept;
  ~UOpRef();

  /// A new reference to `p` (adds one to its count); null stays null.
  static UOpRef share(const UOp* p) noexcept;

  const UOp* get() const noexcept { return p_; }
  const UOp* operator->() const noexcept { return p_; }
  const UOp& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  friend bool operator==(const UOpRef& a, const UOpRef& b) { return a.p_ == b.p_; }

 private:
  friend class UOp;
  friend class InternTable;
  explicit UOpRef(UOp* adopted) noexcept : p_(adopted) {}
  UOp* p_ = nullptr;
};

/// An IR node. Immutable; only reachable through UOpRef or as a `const UOp*` borrowed from one.
class UOp {
 public:
  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

  /// The interned node (op, dtype, srcs, arg): an existing one when it is alive, else a new one.
  static UOpRef make(Op op, DType dtype, std::span<const UOpRef> srcs = {}, Arg arg = {});
  static UOpRef make(Op op, DType dtype, std::initializer_list<UOpRef> srcs, Arg arg = {}) {
    return make(op, dtype, std::span<const UOpRef>(srcs.begin(), srcs.size()), std::move(arg));
  }

  Op op() const { return op_; }
  DType dtype() const { return dtype_; }
  const Arg& arg() const { return arg_; }
  std::span<const UOpRef> srcs() const { return {src_begin(), nsrc_}; }
  const UOpRef& src(size_t i) const { return src_begin()[i]; }
  size_t nsrcs() const { return nsrc_; }
  /// Structural hash (op, dtype, source identities, arg).
  size_t hash() const { return hash_; }

  /// Typed arg access; IrError naming the op when the arg holds another kind.
  int64_t arg_int() const;
  double arg_float() const;
  const std::string& arg_str() const;
  const std::vector<int64_t>& arg_ints() const;
  const Var& arg_var() const;

  /// This node with other sources (same op, dtype, arg); itself when they are the same.
  UOpRef with_srcs(std::span<const UOpRef> srcs) const;
  /// A new handle to this node.
  UOpRef ref() const { return UOpRef::share(this); }
  /// Current reference count (for tests and diagnostics).
  uint32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

  /// Bounds cache used by the symbolic engine: state 0 = not computed, 1 = no bounds,
  /// 2 = [lo, hi]. Racing writers store the same values.
  uint8_t cached_bounds(int64_t& lo, int64_t& hi) const;
  void cache_bounds(uint8_t state, int64_t lo, int64_t hi) const;

  /// Fixed points of rule sets (RuleSet::remember_fixed_points): bit `bit` set once a rewrite
  /// by that set found no rule to fire on this node or anything it reads. Only ever set.
  bool fixed_point_of(uint8_t bit) const {
    return fixed_points_.load(std::memory_order_relaxed) & bit;
  }
  void mark_fixed_point_of(uint8_t bit) const {
    fixed_points_.fetch_or(bit, std::memory_order_relaxed);
  }

  /// Shape cache used by the tensor layer (lazy::ShapeOf): null until set. A node's shape
  /// follows from the node alone, so it is worked out once in the node's life; the cache
  /// belongs to the node and goes with it.
  const std::vector<int64_t>* cached_shape() const {
    return shape_.load(std::memory_order_acquire);
  }
  /// Caches `shape` unless a racing writer got there first; returns the cached shape.
  const std::vector<int64_t>& cache_shape(std::vector<int64_t> shape) const;

 private:
  friend class UOpRef;
  friend class InternTable;
  UOp(Op op, DType dtype, uint32_t nsrc, size_t hash, Arg&& arg);
  ~UOp();
  const UOpRef* src_begin() const { return reinterpret_cast<const UOpRef*>(this + 1); }
  UOpRef* src_begin() { return reinterpret_cast<UOpRef*>(this + 1); }

  mutable std::atomic<uint32_t> refs_{1};
  Op op_;
  mutable std::atomic<uint8_t> bounds_state_{0};
  mutable std::atomic<uint8_t> fixed_points_{0};
  DType dtype_;
  uint32_t nsrc_;
  size_t hash_;
  UOp* chain_ = nullptr;  // next node in the intern bucket
  mutable std::atomic<int64_t> vmin_{0}, vmax_{0};
  mutable std::atomic<const std::vector<int64_t>*> shape_{nullptr};
  Arg arg_;
  // followed by nsrc_ UOpRef
};

/// Number of live nodes in the intern table (for leak tests).
size_t live_uop_count();

/// Called with a BUFFER node's id (arg[0]) when the node is freed, so the runtime can release
/// the device memory behind it. One hook per process; nullptr removes it.
using BufferReleaseHook = void (*)(int64_t id);
void set_buffer_release_hook(BufferReleaseHook hook);

// ---- construction helpers -------------------------------------------------------------------

/// A CONST of dtype `t` holding `v` (wrapped to t for ints, rounded to t for floats).
UOpRef const_int(DType t, int64_t v);
UOpRef const_float(DType t, double v);
UOpRef const_bool(bool v);
/// A CONST of `like`'s dtype: `v` as an int for int/bool dtypes, as a double for floats.
UOpRef const_like(const UOpRef& like, int64_t v);
/// Whether `u` is a CONST of value 0 (0, 0.0, -0.0 or false).
bool is_zero_const(const UOp* u);
/// A DEFINE_VAR of dtype `t` (an int type) named `name` with inclusive bounds.
UOpRef define_var(const std::string& name, int64_t vmin, int64_t vmax, DType t = dtypes::index);
/// A RANGE 0..end-1 with loop id `id`.
UOpRef range(const UOpRef& end, int64_t id);
/// An ALU node; its dtype is src0's (bool for comparisons).
UOpRef alu(Op op, std::initializer_list<UOpRef> srcs);
UOpRef cast(const UOpRef& x, DType t);
UOpRef where(const UOpRef& c, const UOpRef& a, const UOpRef& b);

UOpRef operator+(const UOpRef& a, const UOpRef& b);
UOpRef operator-(const UOpRef& a, const UOpRef& b);
UOpRef operator*(const UOpRef& a, const UOpRef& b);
/// IDIV for ints, FDIV for floats.
UOpRef operator/(const UOpRef& a, const UOpRef& b);
UOpRef operator%(const UOpRef& a, const UOpRef& b);
UOpRef operator-(const UOpRef& a);
UOpRef operator+(const UOpRef& a, int64_t b);
UOpRef operator-(const UOpRef& a, int64_t b);
UOpRef operator*(const UOpRef& a, int64_t b);
UOpRef operator/(const UOpRef& a, int64_t b);
UOpRef operator%(const UOpRef& a, int64_t b);
UOpRef max(const UOpRef& a, const UOpRef& b);
UOpRef lt(const UOpRef& a, const UOpRef& b);
UOpRef ne(const UOpRef& a, const UOpRef& b);
UOpRef eq(const UOpRef& a, const UOpRef& b);

}  // namespace polygrad

template <>
struct std::hash<polygrad::UOpRef> {
  size_t operator()(const polygrad::UOpRef& r) const noexcept {
    return std::hash<const void*>{}(r.get());
  }
};

#endif  // POLYGRAD_IR_UOP_HPP
