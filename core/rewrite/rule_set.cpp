#include "rewrite/rule_set.hpp"

#include "ir/error.hpp"
#include "ir/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace polygrad {

namespace {

bool trace_rules() {
  static const bool on = [] {
    const char* v = std::getenv("POLYGRAD_TRACE_RULES");
    return v && v[0] && v[0] != '0';
  }();
  return on;
}

void collect(const PatternNode& p, std::vector<std::string>& names, size_t& commutative,
             size_t& nodes) {
  ++nodes;
  if (!p.name.empty() && std::find(names.begin(), names.end(), p.name) == names.end())
    names.push_back(p.name);
  if (p.mode == SrcMode::commutative) ++commutative;
  for (const auto& s : p.srcs) collect(*s, names, commutative, nodes);
}

bool const_equals(const UOp& u, double v) {
  if (u.op() != Op::CONST) return false;
  if (const int64_t* i = std::get_if<int64_t>(&u.arg())) return static_cast<double>(*i) == v;
  if (const double* d = std::get_if<double>(&u.arg())) return *d == v;
  return false;
}

}  // namespace

const UOpRef& Match::operator[](std::string_view name) const {
  int s = rule_->slot_of(name);
  if (s < 0 || !(bound_ & (1u << s)))
    ir_error("rule " + rule_->name() + " (" + rule_->location() + "): no binding named '" +
             std::string(name) + "'");
  return *slots_[s];
}

Rule::Rule(const Pattern& pattern, RewriteFn fn, SourceLocation where)
    : pattern_(pattern), fn_(fn), name_(pattern.to_string()), where_(where) {
  size_t ncomm = 0, nodes = 0;
  collect(pattern.node(), slot_names_, ncomm, nodes);
  if (slot_names_.size() > Match::kMaxBindings)
    ir_error("rule " + name_ + ": more than 16 bindings");
  if (ncomm > 8) ir_error("rule " + name_ + ": more than 8 commutative nodes");
  variants_.reserve(size_t{1} << ncomm);
  for (size_t mask = 0; mask < (size_t{1} << ncomm); ++mask) {
    std::vector<bool> flips(ncomm);
    for (size_t i = 0; i < ncomm; ++i) flips[i] = (mask >> i) & 1;
    Variant v;
    v.nodes.reserve(nodes);
    v.children.reserve(nodes);
    size_t k = 0;
    compile(pattern.node(), v, flips, k);
    variants_.push_back(std::move(v));
  }
  root_ops_ = pattern.node().ops;
  if (root_ops_.none()) root_ops_.set();
}

uint16_t Rule::compile(const PatternNode& p, Variant& v, const std::vector<bool>& flips,
                       size_t& k) {
  uint16_t index = static_cast<uint16_t>(v.nodes.size());
  Node& n = v.nodes.emplace_back();
  n.ops = p.ops;
  n.any_op = p.ops.none();
  n.mode = p.mode == SrcMode::commutative ? SrcMode::exact : p.mode;
  n.slot = static_cast<int8_t>(p.name.empty() ? -1 : slot_of(p.name));
  if (p.dtypes.size() > n.dtypes.size()) ir_error("pattern: more than 4 dtypes in one node");
  n.ndtypes = static_cast<uint8_t>(p.dtypes.size());
  std::copy(p.dtypes.begin(), p.dtypes.end(), n.dtypes.begin());
  n.dtype_pred = p.dtype_pred;
  n.pred = p.pred;
  n.arg = p.arg ? &*p.arg : nullptr;
  n.has_const = p.const_value.has_value();
  n.const_value = p.const_value.value_or(0);
  // The children's slots first, filled in as each child is compiled (after its own children).
  const size_t first = v.children.size(), count = p.srcs.size();
  n.first_child = static_cast<uint16_t>(first);
  n.nchildren = static_cast<uint16_t>(count);
  v.children.resize(first + count);
  const bool flip = p.mode == SrcMode::commutative && flips[k++];
  for (size_t i = 0; i < count; ++i) {
    const PatternNode& s = *p.srcs[flip ? count - 1 - i : i];  // (commutative: two sources)
    const uint16_t child = compile(s, v, flips, k);
    v.children[first + i] = child;
  }
  return index;
}

int Rule::slot_of(std::string_view name) const {
  for (size_t i = 0; i < slot_names_.size(); ++i)
    if (slot_names_[i] == name) return static_cast<int>(i);
  return -1;
}

std::string Rule::location() const {
  std::string file = where_.file;
  if (size_t cut = file.rfind("/core/"); cut != std::string::npos) file = file.substr(cut + 1);
  return file + ":" + std::to_string(where_.line);
}

bool Rule::match(const Variant& v, uint16_t ni, const UOpRef& u, Match& m) const {
  const Node& n = v.nodes[ni];
  const UOp& x = *u;
  if (!n.any_op && !n.ops[static_cast<size_t>(x.op())]) return false;
  if (n.ndtypes) {
    bool ok = false;
    for (int i = 0; i < n.ndtypes && !ok; ++i) ok = n.dtypes[i] == x.dtype();
    if (!ok) return false;
  }
  if (n.dtype_pred && !n.dtype_pred(x.dtype())) return false;
  if (n.arg && !arg_equal(*n.arg, x.arg())) return false;
  if (n.has_const && !const_equals(x, n.const_value)) return false;
  if (n.pred && !n.pred(x)) return false;
  if (n.slot >= 0) {
    uint32_t bit = 1u << n.slot;
    if (m.bound_ & bit) {
      if (m.slots_[n.slot]->get() != &x) return false;
    } else {
      m.bound_ |= bit;
      m.slots_[n.slot] = &u;
    }
  }
  const uint16_t* kids = v.children.data() + n.first_child;
  switch (n.mode) {
    case SrcMode::any:
      return true;
    case SrcMode::repeat:
      for (const UOpRef& s : x.srcs())
        if (!match(v, kids[0], s, m)) return false;
      return true;
    default:
      if (x.nsrcs() != n.nchildren) return false;
      for (uint16_t i = 0; i < n.nchildren; ++i)
        if (!match(v, kids[i], x.src(i), m)) return false;
      return true;
  }
}

UOpRef Rule::apply(const UOpRef& u, void* ctx) const {
  Match m;
  m.rule_ = this;
  m.root_ = &u;
  m.ctx_ = ctx;
  for (const Variant& v : variants_) {
    m.bound_ = 0;
    if (!match(v, 0, u, m)) continue;
    if (UOpRef r = fn_(m)) return r;
  }
  return {};
}

bool Rule::matches(const UOpRef& u) const {
  Match m;
  m.rule_ = this;
  m.root_ = &u;
  for (const Variant& v : variants_) {
    m.bound_ = 0;
    if (match(v, 0, u, m)) return true;
  }
  return false;
}

Rule rule(const Pattern& pattern, RewriteFn fn, SourceLocation where) {
  return Rule(pattern, fn, where);
}

RuleSet::RuleSet(std::string name) : name_(std::move(name)) {}

RuleSet& RuleSet::add(Rule r) {
  auto shared = std::make_shared<const Rule>(std::move(r));
  uint32_t index = static_cast<uint32_t>(rules_.size());
  for (int op = 0; op < kOpCount; ++op)
    if (shared->root_ops()[op]) by_op_[op].push_back(index);
  rules_.push_back({std::move(shared), name_});
  return *this;
}

RuleSet& RuleSet::remember_fixed_points() {
  static std::atomic<int> sets{0};
  if (fixed_point_bit_ != 0) return *this;
  const int n = sets.fetch_add(1);
  if (n >= 8) ir_error("rule set " + name_ + ": more than 8 sets remember their fixed points");
  fixed_point_bit_ = static_cast<uint8_t>(1u << n);
  return *this;
}

RuleSet operator+(const RuleSet& a, const RuleSet& b) {
  RuleSet out(a.name_ + "+" + b.name_);
  for (const RuleSet* s : {&a, &b}) {
    for (const RuleSet::Entry& e : s->rules_) {
      uint32_t index = static_cast<uint32_t>(out.rules_.size());
      for (int op = 0; op < kOpCount; ++op)
        if (e.rule->root_ops()[op]) out.by_op_[op].push_back(index);
      out.rules_.push_back(e);
    }
  }
  return out;
}

UOpRef RuleSet::rewrite(const UOpRef& u, void* ctx, const Rule** fired) const {
  for (uint32_t i : by_op_[static_cast<size_t>(u->op())]) {
    const Entry& e = rules_[i];
    UOpRef r = e.rule->apply(u, ctx);
    if (!r || r == u) continue;
    if (fired) *fired = e.rule.get();
    if (trace_rules())
      std::fprintf(stderr, "polygrad: rule %s: %s (%s) on %s -> %s\n", e.set_name.c_str(),
                   e.rule->name().c_str(), e.rule->location().c_str(), node_to_string(*u).c_str(),
                   node_to_string(*r).c_str());
    return r;
  }
  return {};
}

}  // namespace polygrad
