/* The C API of libpolygrad as a table of function pointers, resolved with dlsym when the package
 * loads (api.c), so that the library is found at run time (POLYGRAD_LIB, or the copy installed
 * with the package) rather than at link time. Each field has the type of the polygrad.h entry
 * point of the same name: call pg.pg_tensor_add(a, b, &out). */
#ifndef POLYGRAD_R_API_H
#define POLYGRAD_R_API_H

#include <polygrad/polygrad.h>

/* X(name) for every entry point the package calls that is not in one of polygrad.h's op
 * lists. */
/* clang-format off */
#define PGR_API_FUNCS(X) \
  X(pg_last_error) X(pg_manual_seed) X(pg_compiled_kernel_count) X(pg_tensor_from_data) \
  X(pg_tensor_scalar) X(pg_tensor_free) X(pg_tensor_full) X(pg_tensor_full_int) \
  X(pg_tensor_randint) X(pg_tensor_arange) X(pg_tensor_linspace) X(pg_tensor_eye) \
  X(pg_tensor_full_like) X(pg_tensor_shape) X(pg_tensor_dtype) X(pg_tensor_device) \
  X(pg_tensor_numel) X(pg_tensor_size) X(pg_tensor_element_size) X(pg_tensor_is_realized) \
  X(pg_tensor_realize) X(pg_tensor_realize_all) X(pg_tensor_to_host) X(pg_tensor_item) \
  X(pg_tensor_item_int64) X(pg_tensor_to) X(pg_tensor_assign) X(pg_tensor_cast) \
  X(pg_tensor_pow_base) X(pg_tensor_where) X(pg_tensor_where_scalar) X(pg_tensor_tril) \
  X(pg_tensor_triu) X(pg_tensor_masked_fill) X(pg_tensor_one_hot) X(pg_tensor_lerp) \
  X(pg_tensor_roll) X(pg_tensor_clamp_scalar) X(pg_tensor_hardtanh) X(pg_tensor_var) \
  X(pg_tensor_std) X(pg_tensor_argmax) X(pg_tensor_argmin) X(pg_tensor_logsumexp) \
  X(pg_tensor_transpose) X(pg_tensor_squeeze) X(pg_tensor_flatten) X(pg_tensor_unflatten) \
  X(pg_tensor_shrink) X(pg_tensor_pad_mode) X(pg_tensor_getitem) X(pg_tensor_gather) \
  X(pg_tensor_cat) X(pg_tensor_stack) X(pg_tensor_split_sizes) X(pg_tensor_chunk) \
  X(pg_tensor_linear) X(pg_tensor_layernorm) X(pg_tensor_cross_entropy) \
  X(pg_tensor_binary_crossentropy) X(pg_tensor_binary_crossentropy_logits) X(pg_tensor_einsum) \
  X(pg_tensor_rearrange) X(pg_tensor_conv2d) X(pg_tensor_max_pool2d) X(pg_tensor_avg_pool2d) \
  X(pg_tensor_scaled_dot_product_attention) X(pg_tensor_set_requires_grad) \
  X(pg_tensor_requires_grad) X(pg_tensor_grad) X(pg_tensor_set_grad) X(pg_tensor_backward) \
  X(pg_tensor_gradient) X(pg_device_list) X(pg_device_default) X(pg_device_canonical) \
  X(pg_plugin_load) X(pg_plugin_report) X(pg_safetensors_open) X(pg_safetensors_open_index) \
  X(pg_safetensors_free) X(pg_safetensors_count) X(pg_safetensors_entry) \
  X(pg_safetensors_tensor) X(pg_safetensors_metadata_count) X(pg_safetensors_metadata) \
  X(pg_safetensors_save) X(pg_gpt2_load) X(pg_gpt2_free) X(pg_gpt2_config) X(pg_gpt2_forward) \
  X(pg_gpt2_prefill) X(pg_gpt2_step) X(pg_tokenizer_load) X(pg_tokenizer_free) \
  X(pg_tokenizer_encode) X(pg_tokenizer_decode)
/* clang-format on */

#define PGR_TENSOR_FN(name) X_(pg_tensor_##name)
#define PGR_SCALAR_FN(name) X_(pg_tensor_##name##_scalar)

typedef struct pgr_api {
#define X_(name) __typeof__(&name) name;
#define X(name) X_(name)
  PGR_API_FUNCS(X)
  PG_TENSOR_FILL_OPS(PGR_TENSOR_FN)
  PG_TENSOR_UNARY_OPS(PGR_TENSOR_FN)
  PG_TENSOR_LIKE_OPS(PGR_TENSOR_FN)
  PG_TENSOR_PARAM_OPS(PGR_TENSOR_FN)
  PG_TENSOR_BINARY_OPS(PGR_TENSOR_FN)
  PG_TENSOR_SCALAR_OPS(PGR_SCALAR_FN)
  PG_TENSOR_REDUCE_OPS(PGR_TENSOR_FN)
  PG_TENSOR_AXIS_OPS(PGR_TENSOR_FN)
  PG_TENSOR_LIST_OPS(PGR_TENSOR_FN)
#undef X
#undef X_
} pgr_api;

/* The resolved table; every field is non-NULL once pgr_load succeeded. */
extern pgr_api pg;

#endif /* POLYGRAD_R_API_H */
