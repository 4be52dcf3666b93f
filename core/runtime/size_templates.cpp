// See size_templates.hpp.
#include "runtime/size_templates.hpp"

#include "ir/dtype.hpp"
#include "ir/graph.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <functional>
#include <string>
#include <variant>

namespace polygrad::runtime {

namespace {

/// An integer constant the sizes of a kernel are made of (extents, strides, offsets, counts).
bool is_size_const(const UOp* u) {
  return u->op() == Op::CONST && u->dtype().is_signed_int() && !u->dtype().is_vector() &&
         std::holds_alternative<int64_t>(u->arg());
}

/// A constant as a function of the size t: a * t + b (p 1), a * t * t (p 2), or b (p 0).
struct Rule {
  int64_t a = 0, b = 0;
  int p = 0;
};

std::optional<int64_t> eval(const Rule& r, int64_t t) {
  if (r.p == 0) return r.b;
  int64_t x = t, y = 0;
  if (r.p == 2 && __builtin_mul_overflow(x, t, &x)) return std::nullopt;
  if (__builtin_mul_overflow(x, r.a, &y) || __builtin_add_overflow(y, r.b, &y)) return std::nullopt;
  return y;
}

/// The rule giving c1 at t1 and c2 at t2: a constant, else a pure multiple of t or t * t,
/// else an affine a * t + b (an offset of t, as a cache's length before a new entry).
std::optional<Rule> fit(int64_t c1, int64_t c2, int64_t t1, int64_t t2) {
  if (c1 == c2) return Rule{0, c1, 0};
  if (t1 <= INT32_MAX && t2 <= INT32_MAX) {
    const int64_t q1 = t1 * t1, q2 = t2 * t2;
    if (c1 % q1 == 0 && c2 % q2 == 0 && c1 / q1 == c2 / q2) return Rule{c1 / q1, 0, 2};
  }
  if (c1 % t1 == 0 && c2 % t2 == 0 && c1 / t1 == c2 / t2) return Rule{c1 / t1, 0, 1};
  int64_t dc = 0;
  if (__builtin_sub_overflow(c2, c1, &dc) || dc % (t2 - t1) != 0) return std::nullopt;
  const int64_t a = dc / (t2 - t1);
  int64_t at1 = 0, b = 0;
  if (__builtin_mul_overflow(a, t1, &at1) || __builtin_sub_overflow(c1, at1, &b))
    return std::nullopt;
  return Rule{a, b, 1};
}

/// A DEFINE_VAR's name and least value: what a kernel of another size shares with it (the most
/// a kernel's own variable may be depends on the sizes: schedule/symbolic_sizes.hpp).
size_t var_hash(const UOp* u) {
  return hash_mix(std::hash<std::string>{}(u->arg_var().name),
                  static_cast<size_t>(u->arg_var().vmin));
}

}  // namespace

/// A kernel AST as positions: its nodes but the size constants in toposort order, each source
/// as a position or as a slot of its own holding a size constant (so a constant shared by two
/// uses at one size, a sequence length equal to the head count, still lines up with two
/// constants at another), and a key of everything but the constants' values.
struct SizeTemplates::Sample {
  static constexpr uint32_t kSlot = UINT32_MAX;  // a source that is a size constant

  UOpRef ast;
  std::vector<const UOp*> order;
  std::vector<std::vector<uint32_t>> srcs;
  std::vector<int64_t> values;  // per slot, in order of use
  std::vector<DType> dtypes;    // per slot
  std::vector<bool> extent;     // per slot: a RANGE's extent
  size_t key = 0;

  explicit Sample(const UOpRef& root) : ast(root) {
    std::unordered_map<const UOp*, uint32_t> pos;
    for (const UOp* u : toposort(root)) {
      if (is_size_const(u)) continue;
      const auto i = static_cast<uint32_t>(order.size());
      pos.emplace(u, i);
      order.push_back(u);
      srcs.emplace_back();
      size_t h = hash_mix(hash_mix(static_cast<size_t>(u->op()), u->dtype().key()),
                          u->op() == Op::DEFINE_VAR ? var_hash(u) : arg_hash(u->arg()));
      for (const UOpRef& src : u->srcs()) {
        if (is_size_const(src.get())) {
          srcs[i].push_back(kSlot);
          values.push_back(src->arg_int());
          dtypes.push_back(src->dtype());
          extent.push_back(u->op() == Op::RANGE);
          h = hash_mix(h, src->dtype().key());
        } else {
          srcs[i].push_back(pos.at(src.get()));
        }
        h = hash_mix(h, srcs[i].back());
      }
      key = hash_mix(key, h);
    }
  }

  size_t slots() const { return values.size(); }

  /// The same kernel but for the size constants' values.
  bool aligned(const Sample& o) const {
    if (key != o.key || order.size() != o.order.size() || dtypes != o.dtypes) return false;
    for (size_t i = 0; i < order.size(); ++i) {
      const UOp *a = order[i], *b = o.order[i];
      if (a->op() != b->op() || a->dtype() != b->dtype() || srcs[i] != o.srcs[i]) return false;
      if (a->op() == Op::DEFINE_VAR
              ? a->arg_var().name != b->arg_var().name || a->arg_var().vmin != b->arg_var().vmin
              : !arg_equal(a->arg(), b->arg()))
        return false;
    }
    return true;
  }

  /// The kernel with each slot's constant replaced by `slot(i)`.
  template <typename F>
  UOpRef rebuild(F slot) const {
    std::vector<UOpRef> made(order.size());
    size_t next = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      std::vector<UOpRef> s;
      for (size_t j = 0; j < srcs[i].size(); ++j)
        s.push_back(srcs[i][j] == kSlot ? slot(next++) : made[srcs[i][j]]);
      const UOp* u = order[i];
      // (A kernel's own variable, n0, is declared up to the most that keeps the offsets 32-bit
      // at the sample's sizes; over every size it runs to INT32_MAX, with 64-bit math.)
      made[i] = u->op() == Op::DEFINE_VAR
                    ? define_var(u->arg_var().name, u->arg_var().vmin, INT32_MAX, u->dtype())
                    : u->with_srcs(s);
    }
    return made.back();
  }
};

struct SizeTemplates::Template {
  std::shared_ptr<Sample> sample;
  std::vector<Rule> rules;  // per size constant of the sample
  size_t pivot = 0;         // a rule of t, to solve t from
  int64_t lo = 1;           // the least t (every extent at least 1)
  UOpRef general;           // null when not worthwhile

  /// t when `s` is this kernel at some t.
  std::optional<int64_t> match(const Sample& s) const {
    if (!sample->aligned(s)) return std::nullopt;
    const Rule& r = rules[pivot];
    const int64_t c = s.values[pivot];
    int64_t t = 0;
    if (r.p == 1) {
      if ((c - r.b) % r.a != 0) return std::nullopt;
      t = (c - r.b) / r.a;
    } else {
      if (c % r.a != 0 || c / r.a < 1) return std::nullopt;
      t = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(c / r.a))));
    }
    if (t < lo || t > INT32_MAX) return std::nullopt;
    for (size_t i = 0; i < rules.size(); ++i)
      if (eval(rules[i], t) != s.values[i]) return std::nullopt;
    return t;
  }
};

namespace {

/// The least t at which every extent among `rules` is at least 1; nothing when an extent
/// shrinks as t grows.
std::optional<int64_t> least_size(const std::vector<Rule>& rules, const std::vector<bool>& extent) {
  int64_t lo = 1;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Rule& r = rules[i];
    if (!extent[i] || r.p == 0) continue;
    if (r.a < 0) return std::nullopt;
    if (r.p == 1 && r.b < 1) lo = std::max(lo, (1 - r.b + r.a - 1) / r.a);
  }
  return lo;
}

}  // namespace

SizeTemplates::SizeTemplates() = default;
SizeTemplates::~SizeTemplates() = default;

std::optional<SizeMatch> SizeTemplates::lookup(
    const UOpRef& ast,
    const std::function<bool(const UOpRef& sample, const UOpRef& general, int64_t size)>&
        worthwhile) {
  auto s = std::make_shared<Sample>(ast);
  if (s->slots() == 0) return std::nullopt;
  if (auto found = templates_.find(s->key); found != templates_.end())
    for (const Template& tpl : found->second)
      if (std::optional<int64_t> t = tpl.match(*s)) {
        if (!tpl.general) return std::nullopt;  // not worthwhile: compiled for its sizes
        return SizeMatch{tpl.general, kVar, *t};
      }

  std::vector<std::shared_ptr<Sample>>& seen = samples_[s->key];
  for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
    const Sample& prev = **it;
    if (!prev.aligned(*s)) continue;
    // Candidate sizes: the differing extents first, then any differing constant.
    std::vector<std::pair<int64_t, int64_t>> candidates;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t p = 0; p < s->slots(); ++p) {
        const int64_t t1 = prev.values[p], t2 = s->values[p];
        if (t1 == t2 || t1 < 1 || t2 < 1 || prev.extent[p] != (pass == 0)) continue;
        if (std::find(candidates.begin(), candidates.end(), std::make_pair(t1, t2)) ==
            candidates.end())
          candidates.emplace_back(t1, t2);
      }
    for (const auto& [t1, t2] : candidates) {
      Template tpl;
      tpl.sample = *it;
      bool ok = true;
      for (size_t i = 0; i < s->slots() && ok; ++i) {
        std::optional<Rule> r = fit(prev.values[i], s->values[i], t1, t2);
        ok = r.has_value();
        if (ok) tpl.rules.push_back(*r);
      }
      if (!ok) continue;
      // Solve t from an affine rule when there is one (exact), else from t * t.
      tpl.pivot = tpl.rules.size();
      for (int want : {1, 2})
        for (size_t i = 0; i < tpl.rules.size() && tpl.pivot == tpl.rules.size(); ++i)
          if (tpl.rules[i].p == want) tpl.pivot = i;
      if (tpl.pivot == tpl.rules.size()) continue;
      std::optional<int64_t> lo = least_size(tpl.rules, prev.extent);
      if (!lo || *lo > std::min(t1, t2)) continue;
      tpl.lo = *lo;
      // With two sizes, any constant fits some a * t + b (a t one apart divides everything):
      // an offset rule must hold for a third kernel seen before.
      const bool offset = std::any_of(tpl.rules.begin(), tpl.rules.end(),
                                      [](const Rule& r) { return r.p == 1 && r.b != 0; });
      if (offset && std::none_of(seen.begin(), seen.end(), [&](const auto& o) {
            return o != *it && tpl.match(*o).has_value();
          }))
        continue;
      const UOpRef var = define_var(kVar, tpl.lo, INT32_MAX);
      tpl.general = prev.rebuild([&](size_t i) {
        const Rule& r = tpl.rules[i];
        if (r.p == 0) return const_int(prev.dtypes[i], r.b);
        UOpRef e = r.p == 2 ? var * var : var;
        if (r.a != 1) e = e * r.a;
        if (r.b != 0) e = e + r.b;
        return prev.dtypes[i] == var->dtype() ? e : cast(e, prev.dtypes[i]);
      });
      bool keep = false;  // (a general kernel the codegen rejects is not worthwhile)
      try {
        keep = worthwhile(prev.ast, tpl.general, t1);
      } catch (const std::exception&) {
      }
      if (!keep) tpl.general = {};
      if (templates_.size() > kMaxSamples) templates_.clear();
      std::vector<Template>& tpls = templates_[s->key];
      if (tpls.size() >= kMaxTemplatesPerKernel) tpls.erase(tpls.begin());
      tpls.push_back(std::move(tpl));
      if (!tpls.back().general) return std::nullopt;
      return SizeMatch{tpls.back().general, kVar, t2};
    }
  }
  if (seen.size() >= kMaxSamplesPerKernel) seen.erase(seen.begin());
  seen.push_back(std::move(s));
  if (++sample_count_ > kMaxSamples) {  // kernels of ever new structures: start afresh
    samples_.clear();
    sample_count_ = 0;
  }
  return std::nullopt;
}

void SizeTemplates::forget(const UOpRef& general) {
  for (auto& [key, tpls] : templates_)
    for (Template& tpl : tpls)
      if (tpl.general == general) tpl.general = {};
}

int64_t loop_iterations(const UOpRef& ast,
                        const std::vector<std::pair<std::string, int64_t>>& vars) {
  int64_t n = 1;
  for (const UOp* u : toposort(ast)) {
    if (u->op() != Op::RANGE) continue;
    const UOp* e = u->src(0).get();
    int64_t extent = 0;
    if (e->op() == Op::CONST) {
      extent = e->arg_int();
    } else if (e->op() == Op::DEFINE_VAR) {
      for (const auto& [name, value] : vars)
        if (name == e->arg_var().name) extent = value;
    } else {
      return INT64_MAX;
    }
    if (extent > 0 && __builtin_mul_overflow(n, extent, &n)) return INT64_MAX;
  }
  return n;
}

}  // namespace polygrad::runtime
