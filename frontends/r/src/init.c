/* Registers the package's .Call routines (no dynamic symbol lookup: R_useDynamicSymbols). */
#include "glue.h"

#include <R_ext/Rdynload.h>

SEXP pgr_init(SEXP);
SEXP pgr_load(SEXP);
SEXP pgr_is_loaded(void);
SEXP pgr_fill(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_full(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_randint(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_arange(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_linspace(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_eye(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_device_list(void);
SEXP pgr_device_default(void);
SEXP pgr_device_canonical(SEXP);
SEXP pgr_plugin_load(SEXP);
SEXP pgr_plugin_report(SEXP);
SEXP pgr_from_r(SEXP, SEXP, SEXP);
SEXP pgr_to_r(SEXP);
SEXP pgr_safetensors_load(SEXP, SEXP);
SEXP pgr_gpt2_load(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_gpt2_config(SEXP);
SEXP pgr_gpt2_forward(SEXP, SEXP, SEXP);
SEXP pgr_gpt2_prefill(SEXP, SEXP);
SEXP pgr_gpt2_step(SEXP, SEXP);
SEXP pgr_tokenizer_load(SEXP, SEXP);
SEXP pgr_tokenizer_encode(SEXP, SEXP);
SEXP pgr_tokenizer_decode(SEXP, SEXP);
SEXP pgr_safetensors_save(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_item(SEXP);
SEXP pgr_scalar(SEXP, SEXP, SEXP);
SEXP pgr_linear(SEXP, SEXP, SEXP);
SEXP pgr_layernorm(SEXP, SEXP, SEXP);
SEXP pgr_cross_entropy(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_bce(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_einsum(SEXP, SEXP);
SEXP pgr_rearrange(SEXP, SEXP, SEXP);
SEXP pgr_conv2d(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_max_pool2d(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_avg_pool2d(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_sdpa(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_unary(SEXP, SEXP);
SEXP pgr_param(SEXP, SEXP, SEXP);
SEXP pgr_binop(SEXP, SEXP, SEXP);
SEXP pgr_ops(SEXP, SEXP, SEXP);
SEXP pgr_set_methods(SEXP);
SEXP pgr_dollar(SEXP, SEXP);
SEXP pgr_where(SEXP, SEXP, SEXP);
SEXP pgr_lerp(SEXP, SEXP, SEXP);
SEXP pgr_clamp(SEXP, SEXP, SEXP);
SEXP pgr_hardtanh(SEXP, SEXP, SEXP);
SEXP pgr_masked_fill(SEXP, SEXP, SEXP);
SEXP pgr_tri(SEXP, SEXP, SEXP);
SEXP pgr_full_like(SEXP, SEXP);
SEXP pgr_reduce(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_var_std(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP pgr_argext(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_logsumexp(SEXP, SEXP, SEXP);
SEXP pgr_axis_op(SEXP, SEXP, SEXP);
SEXP pgr_list_op(SEXP, SEXP, SEXP);
SEXP pgr_transpose(SEXP, SEXP, SEXP);
SEXP pgr_squeeze(SEXP, SEXP);
SEXP pgr_flatten(SEXP, SEXP, SEXP);
SEXP pgr_unflatten(SEXP, SEXP, SEXP);
SEXP pgr_shrink(SEXP, SEXP);
SEXP pgr_pad(SEXP, SEXP, SEXP, SEXP);
SEXP pgr_getitem(SEXP, SEXP, SEXP);
SEXP pgr_gather(SEXP, SEXP, SEXP);
SEXP pgr_one_hot(SEXP, SEXP);
SEXP pgr_cat(SEXP, SEXP);
SEXP pgr_stack(SEXP, SEXP);
SEXP pgr_split(SEXP, SEXP, SEXP);
SEXP pgr_chunk(SEXP, SEXP, SEXP);
SEXP pgr_roll(SEXP, SEXP, SEXP);
SEXP pgr_no_grad(SEXP);
SEXP pgr_live_handles(void);
SEXP pgr_gc_threshold(SEXP);
SEXP pgr_shape(SEXP);
SEXP pgr_dtype(SEXP);
SEXP pgr_device(SEXP);
SEXP pgr_numel(SEXP);
SEXP pgr_element_size(SEXP);
SEXP pgr_is_realized(SEXP);
SEXP pgr_realize(SEXP);
SEXP pgr_realize_all(SEXP);
SEXP pgr_to(SEXP, SEXP);
SEXP pgr_cast(SEXP, SEXP);
SEXP pgr_assign(SEXP, SEXP);
SEXP pgr_requires_grad(SEXP);
SEXP pgr_set_requires_grad(SEXP, SEXP);
SEXP pgr_grad(SEXP);
SEXP pgr_set_grad(SEXP, SEXP);
SEXP pgr_backward(SEXP, SEXP);
SEXP pgr_gradient(SEXP, SEXP, SEXP);
SEXP pgr_manual_seed(SEXP);
SEXP pgr_kernel_count(void);

static const R_CallMethodDef call_methods[] = {
    {"pgr_init", (DL_FUNC)&pgr_init, 1},
    {"pgr_load", (DL_FUNC)&pgr_load, 1},
    {"pgr_is_loaded", (DL_FUNC)&pgr_is_loaded, 0},
    {"pgr_fill", (DL_FUNC)&pgr_fill, 4},
    {"pgr_full", (DL_FUNC)&pgr_full, 4},
    {"pgr_randint", (DL_FUNC)&pgr_randint, 5},
    {"pgr_arange", (DL_FUNC)&pgr_arange, 5},
    {"pgr_linspace", (DL_FUNC)&pgr_linspace, 5},
    {"pgr_eye", (DL_FUNC)&pgr_eye, 4},
    {"pgr_device_list", (DL_FUNC)&pgr_device_list, 0},
    {"pgr_device_default", (DL_FUNC)&pgr_device_default, 0},
    {"pgr_device_canonical", (DL_FUNC)&pgr_device_canonical, 1},
    {"pgr_plugin_load", (DL_FUNC)&pgr_plugin_load, 1},
    {"pgr_plugin_report", (DL_FUNC)&pgr_plugin_report, 1},
    {"pgr_from_r", (DL_FUNC)&pgr_from_r, 3},
    {"pgr_to_r", (DL_FUNC)&pgr_to_r, 1},
    {"pgr_safetensors_load", (DL_FUNC)&pgr_safetensors_load, 2},
    {"pgr_gpt2_load", (DL_FUNC)&pgr_gpt2_load, 4},
    {"pgr_gpt2_config", (DL_FUNC)&pgr_gpt2_config, 1},
    {"pgr_gpt2_forward", (DL_FUNC)&pgr_gpt2_forward, 3},
    {"pgr_gpt2_prefill", (DL_FUNC)&pgr_gpt2_prefill, 2},
    {"pgr_gpt2_step", (DL_FUNC)&pgr_gpt2_step, 2},
    {"pgr_tokenizer_load", (DL_FUNC)&pgr_tokenizer_load, 2},
    {"pgr_tokenizer_encode", (DL_FUNC)&pgr_tokenizer_encode, 2},
    {"pgr_tokenizer_decode", (DL_FUNC)&pgr_tokenizer_decode, 2},
    {"pgr_safetensors_save", (DL_FUNC)&pgr_safetensors_save, 5},
    {"pgr_item", (DL_FUNC)&pgr_item, 1},
    {"pgr_scalar", (DL_FUNC)&pgr_scalar, 3},
    {"pgr_linear", (DL_FUNC)&pgr_linear, 3},
    {"pgr_layernorm", (DL_FUNC)&pgr_layernorm, 3},
    {"pgr_cross_entropy", (DL_FUNC)&pgr_cross_entropy, 6},
    {"pgr_bce", (DL_FUNC)&pgr_bce, 5},
    {"pgr_einsum", (DL_FUNC)&pgr_einsum, 2},
    {"pgr_rearrange", (DL_FUNC)&pgr_rearrange, 3},
    {"pgr_conv2d", (DL_FUNC)&pgr_conv2d, 7},
    {"pgr_max_pool2d", (DL_FUNC)&pgr_max_pool2d, 6},
    {"pgr_avg_pool2d", (DL_FUNC)&pgr_avg_pool2d, 6},
    {"pgr_sdpa", (DL_FUNC)&pgr_sdpa, 5},
    {"pgr_unary", (DL_FUNC)&pgr_unary, 2},
    {"pgr_param", (DL_FUNC)&pgr_param, 3},
    {"pgr_binop", (DL_FUNC)&pgr_binop, 3},
    {"pgr_ops", (DL_FUNC)&pgr_ops, 3},
    {"pgr_set_methods", (DL_FUNC)&pgr_set_methods, 1},
    {"pgr_dollar", (DL_FUNC)&pgr_dollar, 2},
    {"pgr_where", (DL_FUNC)&pgr_where, 3},
    {"pgr_lerp", (DL_FUNC)&pgr_lerp, 3},
    {"pgr_clamp", (DL_FUNC)&pgr_clamp, 3},
    {"pgr_hardtanh", (DL_FUNC)&pgr_hardtanh, 3},
    {"pgr_masked_fill", (DL_FUNC)&pgr_masked_fill, 3},
    {"pgr_tri", (DL_FUNC)&pgr_tri, 3},
    {"pgr_full_like", (DL_FUNC)&pgr_full_like, 2},
    {"pgr_reduce", (DL_FUNC)&pgr_reduce, 4},
    {"pgr_var_std", (DL_FUNC)&pgr_var_std, 5},
    {"pgr_argext", (DL_FUNC)&pgr_argext, 4},
    {"pgr_logsumexp", (DL_FUNC)&pgr_logsumexp, 3},
    {"pgr_axis_op", (DL_FUNC)&pgr_axis_op, 3},
    {"pgr_list_op", (DL_FUNC)&pgr_list_op, 3},
    {"pgr_transpose", (DL_FUNC)&pgr_transpose, 3},
    {"pgr_squeeze", (DL_FUNC)&pgr_squeeze, 2},
    {"pgr_flatten", (DL_FUNC)&pgr_flatten, 3},
    {"pgr_unflatten", (DL_FUNC)&pgr_unflatten, 3},
    {"pgr_shrink", (DL_FUNC)&pgr_shrink, 2},
    {"pgr_pad", (DL_FUNC)&pgr_pad, 4},
    {"pgr_getitem", (DL_FUNC)&pgr_getitem, 3},
    {"pgr_gather", (DL_FUNC)&pgr_gather, 3},
    {"pgr_one_hot", (DL_FUNC)&pgr_one_hot, 2},
    {"pgr_cat", (DL_FUNC)&pgr_cat, 2},
    {"pgr_stack", (DL_FUNC)&pgr_stack, 2},
    {"pgr_split", (DL_FUNC)&pgr_split, 3},
    {"pgr_chunk", (DL_FUNC)&pgr_chunk, 3},
    {"pgr_roll", (DL_FUNC)&pgr_roll, 3},
    {"pgr_no_grad", (DL_FUNC)&pgr_no_grad, 1},
    {"pgr_live_handles", (DL_FUNC)&pgr_live_handles, 0},
    {"pgr_gc_threshold", (DL_FUNC)&pgr_gc_threshold, 1},
    {"pgr_shape", (DL_FUNC)&pgr_shape, 1},
    {"pgr_dtype", (DL_FUNC)&pgr_dtype, 1},
    {"pgr_device", (DL_FUNC)&pgr_device, 1},
    {"pgr_numel", (DL_FUNC)&pgr_numel, 1},
    {"pgr_element_size", (DL_FUNC)&pgr_element_size, 1},
    {"pgr_is_realized", (DL_FUNC)&pgr_is_realized, 1},
    {"pgr_realize", (DL_FUNC)&pgr_realize, 1},
    {"pgr_realize_all", (DL_FUNC)&pgr_realize_all, 1},
    {"pgr_to", (DL_FUNC)&pgr_to, 2},
    {"pgr_cast", (DL_FUNC)&pgr_cast, 2},
    {"pgr_assign", (DL_FUNC)&pgr_assign, 2},
    {"pgr_requires_grad", (DL_FUNC)&pgr_requires_grad, 1},
    {"pgr_set_requires_grad", (DL_FUNC)&pgr_set_requires_grad, 2},
    {"pgr_grad", (DL_FUNC)&pgr_grad, 1},
    {"pgr_set_grad", (DL_FUNC)&pgr_set_grad, 2},
    {"pgr_backward", (DL_FUNC)&pgr_backward, 2},
    {"pgr_gradient", (DL_FUNC)&pgr_gradient, 3},
    {"pgr_manual_seed", (DL_FUNC)&pgr_manual_seed, 1},
    {"pgr_kernel_count", (DL_FUNC)&pgr_kernel_count, 0},
    {NULL, NULL, 0}};

void R_init_polygrad(DllInfo* dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
