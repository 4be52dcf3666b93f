// A small open-addressing map keyed by node address, for graph walks (visited sets, rewrite
// memos). Faster than std::unordered_map for this key and allocation-free after reserve.
#ifndef POLYGRAD_IR_PTR_MAP_HPP
#define POLYGRAD_IR_PTR_MAP_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace polygrad::detail {

template <typename V>
class PtrMap {
 public:
  explicit PtrMap(size_t expected = 16) { rehash(capacity_for(expected)); }

  /// The value for `k`, or nullptr.
  V* find(const void* k) {
    for (size_t i = slot(k);; i = (i + 1) & mask_) {
      if (keys_[i] == k) return &vals_[i];
      if (keys_[i] == nullptr) return nullptr;
    }
  }
  bool contains(const void* k) { return find(k) != nullptr; }

  /// Inserts or overwrites; returns the stored value.
  V& put(const void* k, V v) {
    if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.size() * 2);
    size_t i = slot(k);
    while (keys_[i] != nullptr && keys_[i] != k) i = (i + 1) & mask_;
    if (keys_[i] == nullptr) ++size_;
    keys_[i] = k;
    vals_[i] = std::move(v);
    return vals_[i];
  }

  size_t size() const { return size_; }

 private:
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  size_t slot(const void* k) const {
    uint64_t x = reinterpret_cast<uintptr_t>(k);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return static_cast<size_t>(x) & mask_;
  }
  void rehash(size_t cap) {
    std::vector<const void*> keys(cap, nullptr);
    std::vector<V> vals(cap);
    keys.swap(keys_);
    vals.swap(vals_);
    mask_ = cap - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i]) put(keys[i], std::move(vals[i]));
  }

  std::vector<const void*> keys_;
  std::vector<V> vals_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace polygrad::detail

#endif  // POLYGRAD_IR_PTR_MAP_HPP
