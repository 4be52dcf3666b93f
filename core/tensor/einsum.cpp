// einsum and einops-style rearrange.
#include "tensor/tensor_impl.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace polygrad {

namespace {

std::string strip(const std::string& s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

/// Expands "..." in every subscript string into placeholder subscripts '0', '1', ... (one per
/// broadcast axis, right-aligned across operands as numpy broadcasts them); returns how many
/// there are.
int expand_ellipsis(std::vector<std::string>& inputs, std::string* out,
                    const std::vector<Tensor>& operands, const std::string& formula) {
  int most = 0;
  std::vector<int> count(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t at = inputs[i].find("...");
    if (at == std::string::npos) continue;
    if (inputs[i].find("...", at + 3) != std::string::npos)
      user_error("einsum: '...' twice in '" + inputs[i] + "' of '" + formula + "'");
    const int rank = static_cast<int>(operands[i].shape().size());
    count[i] = rank - static_cast<int>(inputs[i].size() - 3);
    if (count[i] < 0)
      user_error("einsum: subscripts '" + inputs[i] + "' name more axes than operand " +
                 std::to_string(i) + " has (" + std::to_string(rank) + ")");
    most = std::max(most, count[i]);
  }
  if (most > 10) user_error("einsum: '...' covers more than 10 axes in '" + formula + "'");
  auto placeholders = [&](int n) {
    std::string p;
    for (int k = most - n; k < most; ++k) p += static_cast<char>('0' + k);
    return p;
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if (size_t at = inputs[i].find("..."); at != std::string::npos)
      inputs[i].replace(at, 3, placeholders(count[i]));
  if (out != nullptr)
    if (size_t at = out->find("..."); at != std::string::npos)
      out->replace(at, 3, placeholders(most));
  return most;
}

/// The first position of `s` whose subscript appears again later, or npos.
size_t first_repeat(const std::string& s) {
  for (size_t a = 0; a < s.size(); ++a)
    if (s.find(s[a], a + 1) != std::string::npos) return a;
  return std::string::npos;
}

/// `x` with axes a < b (equal sizes n) replaced by their diagonal as its last axis: the two
/// axes go last, the n*n elements are padded to n*(n+1), so element k*(n+1) (the diagonal's
/// k-th) starts row k of an (n, n+1) view, whose first column is kept.
Tensor diagonal(const Tensor& x, size_t a, size_t b) {
  using lazy::Shape;
  const Shape& s = x.shape();
  const int64_t n = s[a];
  std::vector<int64_t> order;
  Shape rest;
  for (size_t d = 0; d < s.size(); ++d)
    if (d != a && d != b) {
      order.push_back(static_cast<int64_t>(d));
      rest.push_back(s[d]);
    }
  order.push_back(static_cast<int64_t>(a));
  order.push_back(static_cast<int64_t>(b));
  Shape flat = rest, rows = rest, keep = rest;
  flat.push_back(n * n);
  rows.push_back(n);
  rows.push_back(n + 1);
  std::vector<std::pair<int64_t, int64_t>> pad(rest.size(), {0, 0}), cut;
  pad.emplace_back(0, n);
  for (int64_t d : rest) cut.emplace_back(0, d);
  cut.emplace_back(0, n);
  cut.emplace_back(0, 1);
  keep.push_back(n);
  return x.permute(order).reshape(flat).pad(pad).reshape(rows).shrink(cut).reshape(keep);
}

}  // namespace

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& operands_in) {
  const std::string formula = strip(formula_in);
  const size_t arrow = formula.find("->");
  const std::string lhs = formula.substr(0, arrow);
  std::vector<std::string> inputs;
  for (size_t b = 0;;) {
    size_t c = lhs.find(',', b);
    inputs.push_back(lhs.substr(b, c == std::string::npos ? std::string::npos : c - b));
    if (c == std::string::npos) break;
    b = c + 1;
  }
  if (inputs.size() != operands_in.size())
    user_error("einsum: formula '" + formula_in + "' names " + std::to_string(inputs.size()) +
               " operands, got " + std::to_string(operands_in.size()));
  for (size_t i = 0; i < operands_in.size(); ++i) detail::state(operands_in[i], "einsum");
  std::string out;
  if (arrow != std::string::npos) out = formula.substr(arrow + 2);
  const int broadcast =
      expand_ellipsis(inputs, arrow != std::string::npos ? &out : nullptr, operands_in, formula_in);
  std::map<char, int> uses;  // over the subscripts as written: "ii" sums i
  for (const std::string& in : inputs)
    for (char c : in) ++uses[c];
  std::vector<Tensor> operands = operands_in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = operands[i].shape();
    if (inputs[i].size() != s.size())
      user_error("einsum: subscripts '" + inputs[i] + "' do not match operand " +
                 std::to_string(i) + " of shape " + lazy::shape_str(s));
    for (char c : inputs[i])
      if (!std::isalnum(static_cast<unsigned char>(c)) ||
          (std::isdigit(static_cast<unsigned char>(c)) && c - '0' >= broadcast))
        user_error("einsum: bad subscript '" + std::string(1, c) + "' in '" + formula_in + "'");
    // A subscript repeated in one operand takes that operand's diagonal ("ii->i", "ii").
    for (size_t a; (a = first_repeat(inputs[i])) != std::string::npos;) {
      const size_t b = inputs[i].find(inputs[i][a], a + 1);
      const Shape& now = operands[i].shape();
      if (now[a] != now[b])
        user_error("einsum: subscript '" + std::string(1, inputs[i][a]) + "' repeats in '" +
                   inputs[i] + "' over axes of sizes " + std::to_string(now[a]) + " and " +
                   std::to_string(now[b]));
      operands[i] = diagonal(operands[i], a, b);
      const char c = inputs[i][a];
      inputs[i].erase(b, 1);
      inputs[i].erase(a, 1);
      inputs[i] += c;
    }
  }
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = operands[i].shape();
    for (size_t a = 0; a < s.size(); ++a) {
      char c = inputs[i][a];
      auto it = sizes.find(c);
      if (it != sizes.end() && it->second != s[a] && it->second != 1 && s[a] != 1)
        user_error("einsum: " +
                   (std::isdigit(static_cast<unsigned char>(c))
                        ? "axis " + std::to_string(c - '0') + " of '...'"
                        : "subscript '" + std::string(1, c) + "'") +
                   " has sizes " + std::to_string(it->second) + " and " + std::to_string(s[a]) +
                   " in '" + formula_in + "'");
      sizes[c] = it == sizes.end() ? s[a] : std::max(it->second, s[a]);
    }
  }
  if (arrow != std::string::npos) {
    for (char c : out) {
      if (!sizes.count(c))
        user_error("einsum: output subscript '" + std::string(1, c) + "' is not in the inputs");
      if (std::count(out.begin(), out.end(), c) > 1)
        user_error("einsum: output subscript '" + std::string(1, c) + "' repeats in '" +
                   formula_in + "'");
    }
  } else {
    // numpy's implicit output: the broadcast axes, then the letters used once, sorted.
    for (int k = 0; k < broadcast; ++k) out += static_cast<char>('0' + k);
    for (auto [c, n] : uses)
      if (n == 1 && !std::isdigit(static_cast<unsigned char>(c))) out += c;
  }
  // Every letter: output letters first, then the summed ones.
  std::string all = out;
  for (auto [c, n] : sizes)
    if (out.find(c) == std::string::npos) all += c;
  Shape full;
  for (char c : all) full.push_back(sizes[c]);
  Tensor product;
  for (size_t i = 0; i < operands.size(); ++i) {
    // permute the operand's axes into `all` order, then add size-1 axes for missing letters
    std::vector<int64_t> order;
    std::string present;
    for (char c : all) {
      size_t pos = inputs[i].find(c);
      if (pos == std::string::npos) continue;
      order.push_back(static_cast<int64_t>(pos));
      present += c;
    }
    Tensor x = operands[i].permute(order);
    Shape s;
    size_t j = 0;
    for (char c : all) s.push_back(present.find(c) == std::string::npos ? 1 : x.shape()[j++]);
    x = x.reshape(s).expand(full);
    product = product.defined() ? product * x : x;
  }
  std::vector<int64_t> summed;
  for (size_t a = out.size(); a < all.size(); ++a) summed.push_back(static_cast<int64_t>(a));
  if (summed.empty()) return product;
  // A contraction of several operands keeps their promoted dtype, as matmul's and torch's
  // (int8 operands give int8; the sum's 32-bit accumulator does not show); one operand's sum
  // ("ij->i") follows sum's dtype rule.
  Tensor r = product.sum(summed);
  return operands.size() > 1 ? r.cast(product.dtype()) : r;
}

namespace {

constexpr const char* kEllipsis = "...";

// One side of a rearrange pattern: axis groups, each a list of names. "()" and "1" are groups
// (or members) of size 1 and name nothing; "..." stays a name until expand_ellipsis.
// `bare` gets, per group, whether it stood without parentheses.
std::vector<std::vector<std::string>> parse_side(const std::string& side, const std::string& f,
                                                 std::vector<bool>& bare) {
  std::vector<std::vector<std::string>> groups;
  bool open = false;
  std::string name;
  auto flush = [&] {
    if (name.empty()) return;
    if (name[0] == '.' && name != kEllipsis)
      user_error("rearrange: '" + name + "' in '" + f + "' is not an ellipsis");
    if (std::isdigit(static_cast<unsigned char>(name[0])) && name != "1")
      user_error("rearrange: '" + name + "' in '" + f + "': the only number an axis can be is 1");
    if (name == "1") {
      if (!open) groups.emplace_back(), bare.push_back(true);
    } else if (open) {
      groups.back().push_back(name);
    } else {
      groups.push_back({name});
      bare.push_back(true);
    }
    name.clear();
  };
  for (char c : side) {
    if (c == '(') {
      flush();
      if (open) user_error("rearrange: nested parentheses in '" + f + "'");
      open = true;
      groups.emplace_back();
      bare.push_back(false);
    } else if (c == ')') {
      flush();
      if (!open) user_error("rearrange: unbalanced ')' in '" + f + "'");
      open = false;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      flush();
    } else if (c == '.') {
      if (!name.empty() && name[0] != '.') flush();
      name += c;
      if (name.size() == 3) flush();
    } else if (!name.empty() && name[0] == '.') {
      user_error("rearrange: '" + name + "' in '" + f + "' is not an ellipsis");
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      name += c;
    } else {
      user_error("rearrange: bad character '" + std::string(1, c) + "' in '" + f + "'");
    }
  }
  flush();
  if (open) user_error("rearrange: unbalanced '(' in '" + f + "'");
  return groups;
}

size_t count_ellipses(const std::vector<std::vector<std::string>>& groups) {
  size_t n = 0;
  for (const auto& g : groups) n += std::count(g.begin(), g.end(), kEllipsis);
  return n;
}

// Replaces "..." by the names of the axes it stands for, in place (inside a group on the right).
void expand_ellipsis(std::vector<std::vector<std::string>>& groups, const std::vector<bool>& bare,
                     const std::vector<std::string>& axes) {
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (bare[i] && g.size() == 1 && g[0] == kEllipsis) {
      for (const std::string& a : axes) out.push_back({a});
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& n : g) {
      if (n == kEllipsis)
        names.insert(names.end(), axes.begin(), axes.end());
      else
        names.push_back(n);
    }
    out.push_back(names);
  }
  groups = std::move(out);
}

}  // namespace

Tensor Tensor::rearrange(const std::string& formula,
                         const std::map<std::string, int64_t>& sizes_in) const {
  const detail::TensorImpl& p = detail::state(*this, "rearrange");
  const size_t arrow = formula.find("->");
  if (arrow == std::string::npos) user_error("rearrange: no '->' in '" + formula + "'");
  std::vector<bool> lhs_bare, rhs_bare;
  auto lhs = parse_side(formula.substr(0, arrow), formula, lhs_bare);
  auto rhs = parse_side(formula.substr(arrow + 2), formula, rhs_bare);
  const size_t lhs_dots = count_ellipses(lhs), rhs_dots = count_ellipses(rhs);
  if (lhs_dots > 1 || rhs_dots > 1 || lhs_dots != rhs_dots)
    user_error("rearrange: '" + formula + "' needs one '...' on each side or none");
  if (lhs_dots == 1) {
    for (size_t i = 0; i < lhs.size(); ++i)
      if (!lhs_bare[i] && std::count(lhs[i].begin(), lhs[i].end(), kEllipsis) > 0)
        user_error("rearrange: '...' cannot be inside parentheses on the left of '" + formula +
                   "'");
    if (p.shape.size() + 1 < lhs.size())
      user_error("rearrange: '" + formula + "' has " + std::to_string(lhs.size() - 1) +
                 " named input axes, shape is " + lazy::shape_str(p.shape));
    std::vector<std::string> axes;
    for (size_t i = 0; i + lhs.size() < p.shape.size() + 1; ++i)
      axes.push_back(kEllipsis + std::to_string(i));
    expand_ellipsis(lhs, lhs_bare, axes);
    expand_ellipsis(rhs, rhs_bare, axes);
  }
  if (lhs.size() != p.shape.size())
    user_error("rearrange: '" + formula + "' has " + std::to_string(lhs.size()) +
               " input axes, shape is " + lazy::shape_str(p.shape));
  std::map<std::string, int64_t> sizes = sizes_in;
  std::vector<std::string> names;  // input names in order
  for (size_t a = 0; a < lhs.size(); ++a) {
    int64_t known = 1;
    std::string unknown;
    for (const std::string& n : lhs[a]) {
      if (std::find(names.begin(), names.end(), n) != names.end())
        user_error("rearrange: axis name '" + n + "' repeats in '" + formula + "'");
      names.push_back(n);
      auto it = sizes.find(n);
      if (it != sizes.end()) {
        known *= it->second;
      } else if (!unknown.empty()) {
        user_error("rearrange: cannot infer sizes of both '" + unknown + "' and '" + n + "'");
      } else {
        unknown = n;
      }
    }
    const int64_t dim = p.shape[a];
    if (!unknown.empty()) {
      if (known == 0 || dim % known != 0)
        user_error("rearrange: axis " + std::to_string(a) + " of size " + std::to_string(dim) +
                   " does not split by " + std::to_string(known));
      sizes[unknown] = dim / known;
    } else if (known != dim) {
      user_error("rearrange: group sizes give " + std::to_string(known) + " for axis " +
                 std::to_string(a) + " of size " + std::to_string(dim) + " in shape " +
                 lazy::shape_str(p.shape));
    }
  }
  for (const auto& [n, size] : sizes_in)  // (einops rejects these too)
    if (std::find(names.begin(), names.end(), n) == names.end())
      user_error("rearrange: a size is given for '" + n + "', which '" + formula +
                 "' does not name on its left");
  std::vector<std::string> out_names;
  for (const auto& g : rhs) out_names.insert(out_names.end(), g.begin(), g.end());
  std::vector<std::string> a_sorted = names, b_sorted = out_names;
  std::sort(a_sorted.begin(), a_sorted.end());
  std::sort(b_sorted.begin(), b_sorted.end());
  if (a_sorted != b_sorted)
    user_error("rearrange: '" + formula + "' must name the same axes on both sides");
  Shape flat;
  for (const std::string& n : names) flat.push_back(sizes[n]);
  std::vector<int64_t> order;
  for (const std::string& n : out_names)
    order.push_back(std::find(names.begin(), names.end(), n) - names.begin());
  Shape out;
  for (const auto& g : rhs) {
    int64_t s = 1;
    for (const std::string& n : g) s *= sizes[n];
    out.push_back(s);
  }
  return reshape(flat).permute(order).reshape(out);
}

}  // namespace polygrad
