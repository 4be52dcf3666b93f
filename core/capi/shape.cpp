// C API: movement, joining and splitting, linear algebra and nn ops.
#include "capi/support.hpp"

using namespace polygrad;
using capi::arg;
using capi::guard;
using capi::put;

#define PG_X(name)                                                                      \
  pg_api_status pg_tensor_##name(pg_tensor_t x, const int64_t* values, size_t n,        \
                                 pg_tensor_t* out) {                                    \
    return guard("pg_tensor_" #name,                                                    \
                 [&] { put(out, arg(x, "x").name(capi::ints(values, n, "values"))); }); \
  }
PG_TENSOR_LIST_OPS(PG_X)
#undef PG_X

namespace {

std::vector<std::pair<int64_t, int64_t>> pairs(const int64_t* v, size_t naxes, const char* name) {
  std::vector<int64_t> flat = capi::ints(v, 2 * naxes, name);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < naxes; ++i) out.emplace_back(flat[2 * i], flat[2 * i + 1]);
  return out;
}

Size2 size2(const int64_t* v, const char* name) {
  if (!v) user_error(std::string("argument '") + name + "' is NULL");
  return Size2(v[0], v[1]);
}

}  // namespace

pg_api_status pg_tensor_transpose(pg_tensor_t x, int64_t dim0, int64_t dim1, pg_tensor_t* out) {
  return guard("pg_tensor_transpose", [&] { put(out, arg(x, "x").transpose(dim0, dim1)); });
}

pg_api_status pg_tensor_squeeze(pg_tensor_t x, const int64_t* dim, pg_tensor_t* out) {
  return guard("pg_tensor_squeeze", [&] {
    put(out, arg(x, "x").squeeze(dim ? std::optional<int64_t>(*dim) : std::nullopt));
  });
}

pg_api_status pg_tensor_flatten(pg_tensor_t x, int64_t start_dim, int64_t end_dim,
                                pg_tensor_t* out) {
  return guard("pg_tensor_flatten", [&] { put(out, arg(x, "x").flatten(start_dim, end_dim)); });
}

pg_api_status pg_tensor_unflatten(pg_tensor_t x, int64_t dim, const int64_t* sizes, size_t n,
                                  pg_tensor_t* out) {
  return guard("pg_tensor_unflatten",
               [&] { put(out, arg(x, "x").unflatten(dim, capi::ints(sizes, n, "sizes"))); });
}

pg_api_status pg_tensor_shrink(pg_tensor_t x, const int64_t* bounds, size_t naxes,
                               pg_tensor_t* out) {
  return guard("pg_tensor_shrink",
               [&] { put(out, arg(x, "x").shrink(pairs(bounds, naxes, "bounds"))); });
}

pg_api_status pg_tensor_pad(pg_tensor_t x, const int64_t* pads, size_t naxes, double value,
                            pg_tensor_t* out) {
  return guard("pg_tensor_pad",
               [&] { put(out, arg(x, "x").pad(pairs(pads, naxes, "pads"), value)); });
}

pg_api_status pg_tensor_pad_mode(pg_tensor_t x, const int64_t* pads, size_t naxes, int mode,
                                 double value, pg_tensor_t* out) {
  return guard("pg_tensor_pad_mode", [&] {
    if (mode < PG_PAD_CONSTANT || mode > PG_PAD_CIRCULAR)
      user_error("argument 'mode' is " + std::to_string(mode) +
                 ", not a pg_pad_mode (PG_PAD_CONSTANT, _REFLECT, _REPLICATE or _CIRCULAR)");
    const PadMode m = mode == PG_PAD_REFLECT     ? PadMode::reflect
                      : mode == PG_PAD_REPLICATE ? PadMode::replicate
                      : mode == PG_PAD_CIRCULAR  ? PadMode::circular
                                                 : PadMode::constant;
    put(out, arg(x, "x").pad(pairs(pads, naxes, "pads"), m, value));
  });
}

pg_api_status pg_tensor_getitem(pg_tensor_t x, const pg_index* index, size_t n, pg_tensor_t* out) {
  return guard("pg_tensor_getitem", [&] {
    if (!index && n > 0) user_error("argument 'index' is NULL");
    std::vector<Index> idx;
    for (size_t i = 0; i < n; ++i) {
      const pg_index& e = index[i];
      switch (e.kind) {
        case PG_INDEX_INTEGER:
          idx.emplace_back(e.value);
          break;
        case PG_INDEX_SLICE:
          idx.push_back(Index::slice(e.has_start ? std::optional<int64_t>(e.start) : std::nullopt,
                                     e.has_stop ? std::optional<int64_t>(e.stop) : std::nullopt,
                                     e.step ? e.step : 1));
          break;
        case PG_INDEX_NONE:
          idx.push_back(Index::none());
          break;
        case PG_INDEX_ELLIPSIS:
          idx.push_back(Index::ellipsis());
          break;
        default:
          user_error("index[" + std::to_string(i) + "] has unknown kind " +
                     std::to_string(static_cast<int>(e.kind)));
      }
    }
    put(out, arg(x, "x").getitem(idx));
  });
}

pg_api_status pg_tensor_gather(pg_tensor_t x, int64_t dim, pg_tensor_t index, pg_tensor_t* out) {
  return guard("pg_tensor_gather", [&] { put(out, arg(x, "x").gather(dim, arg(index, "index"))); });
}

pg_api_status pg_tensor_cat(const pg_tensor_t* tensors, size_t n, int64_t dim, pg_tensor_t* out) {
  return guard("pg_tensor_cat",
               [&] { put(out, Tensor::cat(capi::tensors_arg(tensors, n, "tensors"), dim)); });
}

pg_api_status pg_tensor_stack(const pg_tensor_t* tensors, size_t n, int64_t dim, pg_tensor_t* out) {
  return guard("pg_tensor_stack",
               [&] { put(out, Tensor::stack(capi::tensors_arg(tensors, n, "tensors"), dim)); });
}

pg_api_status pg_tensor_split(pg_tensor_t x, int64_t size, int64_t dim, pg_tensor_t* out,
                              size_t capacity, size_t* count) {
  return guard("pg_tensor_split",
               [&] { capi::put_pieces(arg(x, "x").split(size, dim), out, capacity, count); });
}

pg_api_status pg_tensor_split_sizes(pg_tensor_t x, const int64_t* sizes, size_t n, int64_t dim,
                                    pg_tensor_t* out, size_t capacity, size_t* count) {
  return guard("pg_tensor_split_sizes", [&] {
    capi::put_pieces(arg(x, "x").split(capi::ints(sizes, n, "sizes"), dim), out, capacity, count);
  });
}

pg_api_status pg_tensor_chunk(pg_tensor_t x, int64_t n, int64_t dim, pg_tensor_t* out,
                              size_t capacity, size_t* count) {
  return guard("pg_tensor_chunk",
               [&] { capi::put_pieces(arg(x, "x").chunk(n, dim), out, capacity, count); });
}

// ---- linear algebra, nn -------------------------------------------------------------------

pg_api_status pg_tensor_linear(pg_tensor_t x, pg_tensor_t weight, pg_tensor_t bias,
                               pg_tensor_t* out) {
  return guard("pg_tensor_linear",
               [&] { put(out, arg(x, "x").linear(arg(weight, "weight"), capi::opt_arg(bias))); });
}

pg_api_status pg_tensor_layernorm(pg_tensor_t x, const int64_t* axes, size_t naxes, double eps,
                                  pg_tensor_t* out) {
  return guard("pg_tensor_layernorm",
               [&] { put(out, arg(x, "x").layernorm(capi::ints(axes, naxes, "axes"), eps)); });
}

namespace {
Reduction reduction_arg(int r) {
  switch (r) {
    case PG_REDUCTION_MEAN:
      return Reduction::mean;
    case PG_REDUCTION_SUM:
      return Reduction::sum;
    case PG_REDUCTION_NONE:
      return Reduction::none;
  }
  user_error("argument 'reduction' is " + std::to_string(r) +
             ", not a pg_reduction (PG_REDUCTION_MEAN, _SUM or _NONE)");
}
}  // namespace

pg_api_status pg_tensor_cross_entropy(pg_tensor_t x, pg_tensor_t target, int64_t axis,
                                      double label_smoothing, int64_t ignore_index, int reduction,
                                      pg_tensor_t* out) {
  return guard("pg_tensor_cross_entropy", [&] {
    put(out, arg(x, "x").cross_entropy(arg(target, "target"), axis, label_smoothing,
                                       reduction_arg(reduction), ignore_index));
  });
}

pg_api_status pg_tensor_binary_crossentropy(pg_tensor_t x, pg_tensor_t target, int reduction,
                                            pg_tensor_t* out) {
  return guard("pg_tensor_binary_crossentropy", [&] {
    put(out, arg(x, "x").binary_crossentropy(arg(target, "target"), reduction_arg(reduction)));
  });
}

pg_api_status pg_tensor_binary_crossentropy_logits(pg_tensor_t x, pg_tensor_t target,
                                                   pg_tensor_t pos_weight, int reduction,
                                                   pg_tensor_t* out) {
  return guard("pg_tensor_binary_crossentropy_logits", [&] {
    put(out, arg(x, "x").binary_crossentropy_logits(arg(target, "target"), reduction_arg(reduction),
                                                    capi::opt_arg(pos_weight)));
  });
}

pg_api_status pg_tensor_einsum(const char* formula, const pg_tensor_t* operands, size_t n,
                               pg_tensor_t* out) {
  return guard("pg_tensor_einsum", [&] {
    if (!formula) user_error("argument 'formula' is NULL");
    put(out, Tensor::einsum(formula, capi::tensors_arg(operands, n, "operands")));
  });
}

pg_api_status pg_tensor_rearrange(pg_tensor_t x, const char* formula, const char* const* names,
                                  const int64_t* sizes, size_t n, pg_tensor_t* out) {
  return guard("pg_tensor_rearrange", [&] {
    if (!formula) user_error("argument 'formula' is NULL");
    if (n > 0 && (!names || !sizes)) user_error("arguments 'names' and 'sizes' must be set");
    std::map<std::string, int64_t> m;
    for (size_t i = 0; i < n; ++i) {
      if (!names[i]) user_error("names[" + std::to_string(i) + "] is NULL");
      if (!m.emplace(names[i], sizes[i]).second)
        user_error("rearrange: size of '" + std::string(names[i]) + "' given twice");
    }
    put(out, arg(x, "x").rearrange(formula, m));
  });
}

pg_api_status pg_tensor_conv2d(pg_tensor_t x, pg_tensor_t weight, pg_tensor_t bias, int64_t groups,
                               const int64_t stride[2], const int64_t dilation[2],
                               const int64_t padding[2], pg_tensor_t* out) {
  return guard("pg_tensor_conv2d", [&] {
    put(out, arg(x, "x").conv2d(arg(weight, "weight"), capi::opt_arg(bias), groups,
                                size2(stride, "stride"), size2(dilation, "dilation"),
                                size2(padding, "padding")));
  });
}

pg_api_status pg_tensor_max_pool2d(pg_tensor_t x, const int64_t kernel[2], const int64_t* stride,
                                   const int64_t dilation[2], const int64_t padding[2],
                                   int ceil_mode, pg_tensor_t* out) {
  return guard("pg_tensor_max_pool2d", [&] {
    std::optional<Size2> s;
    if (stride) s = Size2(stride[0], stride[1]);
    put(out, arg(x, "x").max_pool2d(size2(kernel, "kernel"), s, size2(dilation, "dilation"),
                                    size2(padding, "padding"), ceil_mode != 0));
  });
}

pg_api_status pg_tensor_avg_pool2d(pg_tensor_t x, const int64_t kernel[2], const int64_t* stride,
                                   const int64_t padding[2], int ceil_mode, int count_include_pad,
                                   pg_tensor_t* out) {
  return guard("pg_tensor_avg_pool2d", [&] {
    std::optional<Size2> s;
    if (stride) s = Size2(stride[0], stride[1]);
    put(out, arg(x, "x").avg_pool2d(size2(kernel, "kernel"), s, size2(padding, "padding"),
                                    ceil_mode != 0, count_include_pad != 0));
  });
}

pg_api_status pg_tensor_scaled_dot_product_attention(pg_tensor_t q, pg_tensor_t k, pg_tensor_t v,
                                                     pg_tensor_t mask, int is_causal,
                                                     pg_tensor_t* out) {
  return guard("pg_tensor_scaled_dot_product_attention", [&] {
    put(out, arg(q, "q").scaled_dot_product_attention(arg(k, "k"), arg(v, "v"), capi::opt_arg(mask),
                                                      is_causal != 0));
  });
}
