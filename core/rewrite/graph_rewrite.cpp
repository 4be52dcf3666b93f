// The rewrite drivers, as one explicit-stack walk (deep graphs do not recurse).
//
// A frame rewrites one node. Stages: enter (memo hit? top-down rules), sources (push the
// sources), build (rebuild from rewritten sources, bottom-up rules) and result (the node's
// answer is that of the rewrite result pushed above it).
#include "rewrite/graph_rewrite.hpp"

#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "ir/ptr_map.hpp"

#include <algorithm>
#include <vector>

namespace polygrad::detail {

namespace {

enum class Stage : uint8_t { enter, sources, build, result };

struct Frame {
  UOpRef node;
  Stage stage;
  UOpRef pending;        // stage result: the rewrite whose answer becomes this node's
  bool chained = false;  // pushed as a rule's result: counts toward max_chain
};

}  // namespace

// Its memo outlives a run: GraphRewriter runs it on several roots.
class Rewriter {
 public:
  Rewriter(const RuleSet& rules, const RewriteOptions& opts)
      : rules_(rules),
        opts_(opts),
        fixed_bit_(opts.mode == RewriteMode::bottom_up && opts.ctx == nullptr
                       ? rules.fixed_point_bit()
                       : uint8_t{0}) {}

  UOpRef run(const UOpRef& root) {
    push(root, nullptr);
    while (!stack_.empty()) step();
    return answer_of(root);
  }

 private:
  void push(const UOpRef& n, const Rule* because) {
    if (because && ++chain_ > opts_.max_chain)
      ir_error("graph_rewrite: rule " + because->name() + " (" + because->location() +
               ") keeps firing: more than " + std::to_string(opts_.max_chain) +
               " nested rewrites, last result " + node_to_string(*n));
    stack_.push_back(Frame{n, Stage::enter, {}, because != nullptr});
  }

  // A rule produced `r` for the frame on top: its answer becomes the frame's.
  void defer_to(const UOpRef& r, const Rule* rule) {
    if (busy(r.get())) {
      std::string who = rule ? "rule " + rule->name() + " (" + rule->location() + ")" : "rebuild";
      ir_error("graph_rewrite: " + who + " loops: its result " + node_to_string(*r) +
               " is already being rewritten");
    }
    Frame& f = stack_.back();
    f.stage = Stage::result;
    f.pending = r;
    push(r, rule);
  }

  void finish(const UOpRef& answer) {
    Frame& f = stack_.back();
    in_progress_.put(f.node.get(), 0);
    memo_.put(f.node.get(), Done{f.node, answer});
    if (f.chained) --chain_;
    stack_.pop_back();
  }

  void step() {
    Frame& f = stack_.back();
    switch (f.stage) {
      case Stage::enter: {
        if (memo_.contains(f.node.get()) || fixed(f.node.get())) {
          if (f.chained) --chain_;
          stack_.pop_back();
          return;
        }
        in_progress_.put(f.node.get(), 1);
        f.stage = Stage::sources;
        if (opts_.mode == RewriteMode::top_down) {
          const Rule* fired = nullptr;
          if (UOpRef r = rules_.rewrite(f.node, opts_.ctx, &fired)) {
            UOpRef keep = r;
            return defer_to(keep, fired);
          }
        }
        return;
      }
      case Stage::sources: {
        f.stage = Stage::build;
        UOpRef n = f.node;  // push() may move the frame
        for (size_t i = n->nsrcs(); i-- > 0;) {
          const UOp* s = n->src(i).get();
          if (!memo_.contains(s) && !busy(s) && !fixed(s)) push(n->src(i), nullptr);
        }
        return;
      }
      case Stage::build: {
        srcs_.clear();
        for (const UOpRef& s : f.node->srcs()) {
          Done* done = memo_.find(s.get());
          // (Not found: a fixed point, or in progress: a node feeding its own rewrite.)
          srcs_.push_back(done ? done->answer : s);
        }
        UOpRef built = f.node->with_srcs(srcs_);
        if (opts_.mode == RewriteMode::top_down) {
          if (built == f.node) return finish(built);
          return defer_to(built, nullptr);
        }
        const Rule* fired = nullptr;
        UOpRef r = rules_.rewrite(built, opts_.ctx, &fired);
        if (!r) {
          if (fixed_bit_ && std::all_of(built->srcs().begin(), built->srcs().end(),
                                        [&](const UOpRef& s) { return fixed(s.get()); }))
            built->mark_fixed_point_of(fixed_bit_);
          return finish(built);
        }
        if (opts_.mode == RewriteMode::single) return finish(r);
        return defer_to(r, fired);
      }
      case Stage::result: {
        UOpRef answer = answer_of(f.pending);
        return finish(answer);
      }
    }
  }

  // The answer for a node already rewritten (a fixed point is its own).
  UOpRef answer_of(const UOpRef& n) {
    Done* done = memo_.find(n.get());
    return done ? done->answer : n;
  }

  // A node the rules were found not to change (RuleSet::remember_fixed_points): its own answer.
  bool fixed(const UOp* n) const { return fixed_bit_ && n->fixed_point_of(fixed_bit_); }

  bool busy(const UOp* n) {
    char* b = in_progress_.find(n);
    return b && *b;
  }

  const RuleSet& rules_;
  const RewriteOptions& opts_;
  const uint8_t fixed_bit_;
  std::vector<Frame> stack_;
  // Keyed by node address; the key node is held so that its address is not reused.
  struct Done {
    UOpRef key, answer;
  };
  detail::PtrMap<Done> memo_;
  detail::PtrMap<char> in_progress_;
  std::vector<UOpRef> srcs_;
  int chain_ = 0;
};

}  // namespace polygrad::detail

namespace polygrad {

UOpRef graph_rewrite(const UOpRef& root, const RuleSet& rules, const RewriteOptions& opts) {
  UOpRef out = detail::Rewriter(rules, opts).run(root);
  POLYGRAD_VERIFY(out);  // debug builds: every pass leaves a well-formed graph
  return out;
}

GraphRewriter::GraphRewriter(const RuleSet& rules, const RewriteOptions& opts)
    : opts_(opts), rewriter_(std::make_unique<detail::Rewriter>(rules, opts_)) {}

GraphRewriter::~GraphRewriter() = default;

UOpRef GraphRewriter::rewrite(const UOpRef& root) {
  UOpRef out = rewriter_->run(root);
  POLYGRAD_VERIFY(out);
  return out;
}

}  // namespace polygrad
