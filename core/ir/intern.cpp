// The intern table behind UOp::make and the reference counting that frees nodes.
//
// 64 shards, each a mutex and a chained hash table threaded through UOp::chain_. A lookup only
// takes a node whose count it can raise from a nonzero value; a count that reached zero never
// rises again, so the thread that brought it to zero alone unlinks and frees the node, and a
// concurrent make of the same key simply builds a fresh node beside the dying one.
#include "ir/uop.hpp"

#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace polygrad {

namespace {
std::atomic<BufferReleaseHook> buffer_release_hook{nullptr};

}  // namespace

class InternTable {
 public:
  static constexpr size_t kShards = 64;

  static InternTable& get() {
    // Never destroyed: nodes may be released during static destruction of other objects.
    static InternTable* table = new InternTable();
    return *table;
  }

  UOpRef make(Op op, DType dtype, std::span<const UOpRef> srcs, Arg&& arg) {
    size_t h = hash_mix(static_cast<size_t>(op), dtype.key());
    for (const UOpRef& s : srcs) h = hash_mix(h, reinterpret_cast<size_t>(s.get()));
    h = hash_mix(h, arg_hash(arg));
    Shard& shard = shards_[h % kShards];
    std::lock_guard<std::mutex> lock(shard.mu);
    if (!shard.buckets.empty()) {
      for (UOp* n = shard.buckets[(h / kShards) & (shard.buckets.size() - 1)]; n; n = n->chain_) {
        if (n->hash_ == h && same(n, op, dtype, srcs, arg) && try_acquire(n)) return UOpRef(n);
      }
    }
    void* mem = ::operator new(sizeof(UOp) + srcs.size() * sizeof(UOpRef));
    UOp* n = new (mem) UOp(op, dtype, static_cast<uint32_t>(srcs.size()), h, std::move(arg));
    UOpRef* out = n->src_begin();
    for (size_t i = 0; i < srcs.size(); ++i) new (out + i) UOpRef(srcs[i]);
    insert(shard, n);
    return UOpRef(n);
  }

  /// Called by the thread that brought n's count to zero: unlink and free n, then release its
  /// sources, iteratively so that long chains do not recurse.
  void destroy(UOp* first) {
    std::vector<UOp*> work{first};
    while (!work.empty()) {
      UOp* n = work.back();
      work.pop_back();
      {
        Shard& shard = shards_[n->hash_ % kShards];
        std::lock_guard<std::mutex> lock(shard.mu);
        UOp** link = &shard.buckets[(n->hash_ / kShards) & (shard.buckets.size() - 1)];
        while (*link != n) link = &(*link)->chain_;
        *link = n->chain_;
        --shard.count;
      }
      UOpRef* s = n->src_begin();
      for (uint32_t i = 0; i < n->nsrc_; ++i) {
        UOp* p = s[i].p_;
        s[i].p_ = nullptr;
        if (p->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) work.push_back(p);
      }
      if (n->op_ == Op::BUFFER) {
        BufferReleaseHook hook = buffer_release_hook.load(std::memory_order_acquire);
        const auto* ids = std::get_if<std::vector<int64_t>>(&n->arg_);
        if (hook && ids && !ids->empty()) hook((*ids)[0]);
      }
      n->~UOp();
      ::operator delete(n);
    }
  }

  size_t size() {
    size_t total = 0;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> lock(s.mu);
      total += s.count;
    }
    return total;
  }

 private:
  struct alignas(64) Shard {
    std::mutex mu;
    std::vector<UOp*> buckets;
    size_t count = 0;
  };

  static bool same(const UOp* n, Op op, DType dtype, std::span<const UOpRef> srcs, const Arg& arg) {
    if (n->op_ != op || !(n->dtype_ == dtype) || n->nsrc_ != srcs.size()) return false;
    const UOpRef* s = n->src_begin();
    for (size_t i = 0; i < srcs.size(); ++i)
      if (s[i].get() != srcs[i].get()) return false;
    return arg_equal(n->arg_, arg);
  }

  static bool try_acquire(UOp* n) {
    uint32_t c = n->refs_.load(std::memory_order_relaxed);
    while (c != 0)
      if (n->refs_.compare_exchange_weak(c, c + 1, std::memory_order_acquire)) return true;
    return false;
  }

  static void insert(Shard& shard, UOp* n) {
    if (shard.count + 1 > shard.buckets.size()) grow(shard);
    UOp*& head = shard.buckets[(n->hash_ / kShards) & (shard.buckets.size() - 1)];
    n->chain_ = head;
    head = n;
    ++shard.count;
  }

  static void grow(Shard& shard) {
    std::vector<UOp*> next(shard.buckets.empty() ? 64 : shard.buckets.size() * 2, nullptr);
    for (UOp* head : shard.buckets) {
      while (head) {
        UOp* n = head;
        head = n->chain_;
        UOp*& slot = next[(n->hash_ / kShards) & (next.size() - 1)];
        n->chain_ = slot;
        slot = n;
      }
    }
    shard.buckets.swap(next);
  }

  Shard shards_[kShards];
};

UOp::UOp(Op op, DType dtype, uint32_t nsrc, size_t hash, Arg&& arg)
    : op_(op), dtype_(dtype), nsrc_(nsrc), hash_(hash), arg_(std::move(arg)) {}

UOpRef UOp::make(Op op, DType dtype, std::span<const UOpRef> srcs, Arg arg) {
  return InternTable::get().make(op, dtype, srcs, std::move(arg));
}

void set_buffer_release_hook(BufferReleaseHook hook) {
  buffer_release_hook.store(hook, std::memory_order_release);
}

size_t live_uop_count() {
  return InternTable::get().size();
}

UOpRef::UOpRef(const UOpRef& o) noexcept : p_(o.p_) {
  if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
}

UOpRef& UOpRef::operator=(const UOpRef& o) noexcept {
  UOpRef tmp(o);
  std::swap(p_, tmp.p_);
  return *this;
}

UOpRef& UOpRef::operator=(UOpRef&& o) noexcept {
  UOpRef tmp(std::move(o));
  std::swap(p_, tmp.p_);
  return *this;
}

UOpRef::~UOpRef() {
  if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) InternTable::get().destroy(p_);
}

UOpRef UOpRef::share(const UOp* p) noexcept {
  UOp* q = const_cast<UOp*>(p);
  if (q) q->refs_.fetch_add(1, std::memory_order_relaxed);
  return UOpRef(q);
}

}  // namespace polygrad
