// Element types of the IR: the scalar dtypes of the plugin ABI (pg_dtype), vectors of them and
// pointers into an address space (kernel level).
#ifndef POLYGRAD_IR_DTYPE_HPP
#define POLYGRAD_IR_DTYPE_HPP

#include <polygrad/plugin.h>

#include <cstdint>
#include <string>

namespace polygrad {

/// Where a pointer points; the values equal pg_addrspace's.
enum class AddrSpace : uint8_t {
  none = PG_ADDR_NONE,      ///< not a pointer
  global = PG_ADDR_GLOBAL,  ///< device memory
  local = PG_ADDR_LOCAL,    ///< workgroup-shared memory
  reg = PG_ADDR_REG         ///< per-thread array
};

/// A value type: scalar element type (pg_dtype), lane count, and an address space that is
/// `none` for values. A pointer's scalar and lanes describe the pointee. Four bytes, trivially
/// copyable, compared by value.
class DType {
 public:
  constexpr DType() = default;
  constexpr explicit DType(pg_dtype scalar, int lanes = 1, AddrSpace space = AddrSpace::none)
      : scalar_(static_cast<uint8_t>(scalar)), lanes_(static_cast<uint8_t>(lanes)), space_(space) {}

  /// The scalar element type (the pointee's, for pointers).
  constexpr pg_dtype scalar() const { return static_cast<pg_dtype>(scalar_); }
  /// Lanes: 1 for scalars.
  constexpr int lanes() const { return lanes_; }
  constexpr AddrSpace addrspace() const { return space_; }
  constexpr bool is_ptr() const { return space_ != AddrSpace::none; }
  constexpr bool is_vector() const { return lanes_ > 1; }

  /// This type with `n` lanes (n in 1..255).
  constexpr DType vec(int n) const { return DType(scalar(), n, space_); }
  /// A pointer to this (value) type in `space`.
  constexpr DType ptr(AddrSpace space = AddrSpace::global) const {
    return DType(scalar(), lanes_, space);
  }
  /// The pointee of a pointer (the type itself for values).
  constexpr DType base() const { return DType(scalar(), lanes_); }
  /// The scalar value type: one lane, not a pointer.
  constexpr DType scalar_type() const { return DType(scalar()); }

  /// Bytes of one scalar element (0 for void).
  int scalar_size() const;
  /// Bytes of a value: scalar size times lanes; 8 for pointers.
  int itemsize() const;
  /// Bits of one scalar element.
  int bits() const { return scalar_size() * 8; }

  bool is_void() const { return !is_ptr() && scalar() == PG_DTYPE_VOID; }
  bool is_bool() const { return !is_ptr() && scalar() == PG_DTYPE_BOOL; }
  /// Signed or unsigned integer (not bool), any lanes.
  bool is_int() const;
  bool is_unsigned() const;
  bool is_signed_int() const { return is_int() && !is_unsigned(); }
  bool is_float() const;

  /// "float32", "int32.vec(4)", "float32*[global]" (pointer), "float32.vec(4)*[local]".
  std::string name() const;

  /// Minimum value of the scalar type: ints exactly (uint64's is 0), floats -inf, bool 0.
  double min_value() const;
  /// Maximum value: floats +inf, bool 1, uint64 2^64-1 rounded to double.
  double max_value() const;
  /// Integer range of an int or bool scalar; uint64's maximum saturates at INT64_MAX.
  int64_t int_min() const;
  int64_t int_max() const;

  /// A 32-bit key for hashing.
  constexpr uint32_t key() const {
    return uint32_t{scalar_} | uint32_t{lanes_} << 8 | uint32_t{static_cast<uint8_t>(space_)} << 16;
  }
  friend constexpr bool operator==(DType a, DType b) { return a.key() == b.key(); }

 private:
  uint8_t scalar_ = PG_DTYPE_VOID;
  uint8_t lanes_ = 1;
  AddrSpace space_ = AddrSpace::none;
  uint8_t pad_ = 0;
};

/// The scalar dtypes by name: dtypes::float32, dtypes::int64, ...
namespace dtypes {
inline constexpr DType void_ = DType(PG_DTYPE_VOID);
inline constexpr DType bool_ = DType(PG_DTYPE_BOOL);
inline constexpr DType int8 = DType(PG_DTYPE_INT8);
inline constexpr DType int16 = DType(PG_DTYPE_INT16);
inline constexpr DType int32 = DType(PG_DTYPE_INT32);
inline constexpr DType int64 = DType(PG_DTYPE_INT64);
inline constexpr DType uint8 = DType(PG_DTYPE_UINT8);
inline constexpr DType uint16 = DType(PG_DTYPE_UINT16);
inline constexpr DType uint32 = DType(PG_DTYPE_UINT32);
inline constexpr DType uint64 = DType(PG_DTYPE_UINT64);
inline constexpr DType float16 = DType(PG_DTYPE_FLOAT16);
inline constexpr DType bfloat16 = DType(PG_DTYPE_BFLOAT16);
inline constexpr DType float32 = DType(PG_DTYPE_FLOAT32);
inline constexpr DType float64 = DType(PG_DTYPE_FLOAT64);
/// The type of shapes, indices and loop counters.
inline constexpr DType index = DType(PG_DTYPE_INT64);
}  // namespace dtypes

/// The scalar dtype named `name` ("float32", ...); throws IrError for an unknown name.
DType dtype_from_name(const std::string& name);

/// The result dtype of a binary op on two tensors of scalar dtypes a and b, as
/// torch.result_type(tensor_a, tensor_b) (the tensor-tensor rule; vectors and pointers are
/// rejected). Throws IrError for uint64 with a signed int (no integer type holds both).
DType promote(DType a, DType b);

/// `v` wrapped to the int (or bool) scalar type `t` as two's complement C arithmetic does:
/// truncate to t's bits, sign-extend for signed types; bool is v != 0. uint64 values are kept
/// as their bit pattern.
int64_t wrap_int(DType t, int64_t v);

}  // namespace polygrad

#endif  // POLYGRAD_IR_DTYPE_HPP
