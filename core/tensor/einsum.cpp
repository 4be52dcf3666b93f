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

}  // namespace

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& operands) {
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
  if (inputs.size() != operands.size())
    user_error("einsum: formula '" + formula_in + "' names " + std::to_string(inputs.size()) +
               " operands, got " + std::to_string(operands.size()));
  std::map<char, int64_t> sizes;
  std::map<char, int> count;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = detail::state(operands[i], "einsum").shape;
    if (inputs[i].size() != s.size())
      user_error("einsum: subscripts '" + inputs[i] + "' do not match operand " +
                 std::to_string(i) + " of shape " + lazy::shape_str(s));
    for (size_t a = 0; a < s.size(); ++a) {
      char c = inputs[i][a];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        user_error("einsum: bad subscript '" + std::string(1, c) + "' in '" + formula_in + "'");
      if (std::count(inputs[i].begin(), inputs[i].end(), c) > 1)
        user_error("einsum: repeated subscript '" + std::string(1, c) + "' in one operand ('" +
                   inputs[i] + "') is not supported");
      auto it = sizes.find(c);
      if (it != sizes.end() && it->second != s[a] && it->second != 1 && s[a] != 1)
        user_error("einsum: subscript '" + std::string(1, c) + "' has sizes " +
                   std::to_string(it->second) + " and " + std::to_string(s[a]));
      sizes[c] = it == sizes.end() ? s[a] : std::max(it->second, s[a]);
      ++count[c];
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = formula.substr(arrow + 2);
    for (char c : out)
      if (!sizes.count(c))
        user_error("einsum: output subscript '" + std::string(1, c) + "' is not in the inputs");
  } else {
    for (auto [c, n] : count)
      if (n == 1) out += c;
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
  return summed.empty() ? product : product.sum(summed);
}

namespace {

// One side of a rearrange pattern: axis groups, each a list of names ("()" is an empty group).
std::vector<std::vector<std::string>> parse_side(const std::string& side, const std::string& f) {
  std::vector<std::vector<std::string>> groups;
  bool open = false;
  std::string name;
  auto flush = [&] {
    if (name.empty()) return;
    if (open)
      groups.back().push_back(name);
    else
      groups.push_back({name});
    name.clear();
  };
  for (char c : side) {
    if (c == '(') {
      flush();
      if (open) user_error("rearrange: nested parentheses in '" + f + "'");
      open = true;
      groups.emplace_back();
    } else if (c == ')') {
      flush();
      if (!open) user_error("rearrange: unbalanced ')' in '" + f + "'");
      open = false;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      flush();
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

}  // namespace

Tensor Tensor::rearrange(const std::string& formula,
                         const std::map<std::string, int64_t>& sizes_in) const {
  const detail::TensorImpl& p = detail::state(*this, "rearrange");
  const size_t arrow = formula.find("->");
  if (arrow == std::string::npos) user_error("rearrange: no '->' in '" + formula + "'");
  auto lhs = parse_side(formula.substr(0, arrow), formula);
  auto rhs = parse_side(formula.substr(arrow + 2), formula);
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
