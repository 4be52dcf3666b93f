# The tensor methods reached with x$name(...). Each is one .Call over the C API, apart from
# the few compositions named in their comments. Dims are 1-based (negative from the end).

#' Tensor methods
#'
#' A tensor's methods are called as `x$name(...)`, as in torch for R; dims count from 1
#' (negative ones from the end) and every method returns a new lazy tensor unless it says
#' otherwise. Properties: `x$shape`, `x$ndim`, `x$dtype`, `x$device`, `x$requires_grad`
#' (settable), `x$grad` (settable, `NULL` when none), `x$T` (last two dims swapped).
#'
#' * Realisation and conversion: `realize()` (runs the graph, returns `x`), `item()` (the one
#'   value as an R number), `numel()`, `size(dim = NULL)`, `element_size()`, `is_realized()`,
#'   `to(device = NULL, dtype = NULL)`, `cpu()`, `cuda()`, `cast(dtype)`, `float()`, `double()`,
#'   `half()`, `int()`, `long()`, `bool()`, `detach()`, `clone()`, `contiguous()`,
#'   `assign(value)` (writes `value` into `x`'s buffer, lazily; returns `x`),
#'   `requires_grad_(requires_grad = TRUE)`.
#' * Autograd: `backward(gradient = NULL)` adds d(x)/d(leaf) to the `grad` of every tensor
#'   with `requires_grad` that `x` depends on (see [with_no_grad()], [pg_gradient()]).
#' * Arithmetic and comparison (also as operators, see [Ops.polygrad_tensor]): `add`, `sub`,
#'   `mul`, `div`, `pow`, `remainder` (`%%`), `floor_divide` (`%/%`), `maximum`, `minimum`,
#'   `eq`, `ne`, `lt`, `le`, `gt`, `ge` (bool results), `logical_and`, `logical_or`,
#'   `logical_not`, `bitwise_and`, `bitwise_or`, `bitwise_xor`; each takes a tensor or an R
#'   value.
#' * Element-wise: `neg`, `exp`, `log`, `exp2`, `log2`, `log10`, `log1p`, `expm1`, `sqrt`,
#'   `rsqrt`, `square`, `abs`, `sign`, `reciprocal`, `sin`, `cos`, `tan`, `asin`, `acos`,
#'   `atan`, `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh`, `ceil`, `floor`, `round`,
#'   `trunc`, `isnan`, `isinf`, `isfinite`, `clamp(min = NULL, max = NULL)` (alias `clip`),
#'   `where(x, y)` (`self` is the condition), `lerp(end, weight)`.
#' * Activations: `relu`, `relu6`, `leaky_relu(negative_slope = 0.01)`, `sigmoid`,
#'   `logsigmoid`, `gelu`, `quick_gelu`, `silu`, `swish`, `mish`, `elu(alpha = 1)`,
#'   `celu(alpha = 1)`, `selu`, `softplus(beta = 1)`, `softsign`,
#'   `hardtanh(min_val = -1, max_val = 1)`, `hardswish`, `hardsigmoid`,
#'   `dropout(p = 0.5, training = TRUE)` (composition: `rand_like`, `ge`, `where`, `mul`).
#' * Reductions (`dim = NULL` reduces every dim): `sum`, `mean`, `prod`, `max`, `min`, `any`,
#'   `all` (each `(dim = NULL, keepdim = FALSE)`), `var` and `std`
#'   `(dim = NULL, keepdim = FALSE, correction = 1)`, `argmax` and `argmin`
#'   `(dim = NULL, keepdim = FALSE)` (1-based int32 indices), `logsumexp(dim = -1, keepdim =
#'   FALSE)`, `cumsum(dim)`, `softmax(dim = -1)`, `log_softmax(dim = -1)`.
#' * Shape: `reshape(shape)` and `view(shape)` (one -1 allowed), `expand(shape)`,
#'   `permute(dims)`, `transpose(dim0 = -2, dim1 = -1)`, `t()`, `squeeze(dim = NULL)`,
#'   `unsqueeze(dim)`, `flatten(start_dim = 1, end_dim = -1)`, `unflatten(dim, sizes)`,
#'   `flip(dims)`, `tile(times)` (repeats per dim; alias `repeat_`),
#'   `narrow(dim, start, length)`, `shrink(bounds)` (a list of `c(first, last)` per dim,
#'   1-based and inclusive), `pad(pad, value = 0, mode = "constant")` (a list of
#'   `c(before, after)` per dim from the first; modes `constant`, `reflect`, `replicate`,
#'   `circular`), `roll(shifts, dims = NULL)`, `split(split_size, dim = 1)` (a size, or a
#'   vector of sizes; a list of tensors), `chunk(chunks, dim = 1)`, `gather(dim, index)`
#'   (1-based index tensor), `index_select(dim, index)` (1-based R vector or tensor),
#'   `tril(diagonal = 0)`,
#'   `triu(diagonal = 0)`, `masked_fill(mask, value)`, `one_hot(num_classes = -1)` (1-based
#'   classes). Indexing: `x[i, j]` (see \code{\link{[.polygrad_tensor}}).
#' * Linear algebra and nn: `matmul(other)` (also `%*%`), `dot(other)`, `outer(other)`,
#'   `linear(weight, bias = NULL)`, `layernorm(dim = -1, eps = 1e-5)`,
#'   `cross_entropy(target, dim = -1, label_smoothing = 0, ignore_index = -100, reduction =
#'   "mean")` (an integer `target` holds 1-based classes, a float one probabilities),
#'   `binary_cross_entropy(target, reduction = "mean")`,
#'   `binary_cross_entropy_with_logits(target, pos_weight = NULL, reduction = "mean")`,
#'   `conv2d(weight, bias = NULL, stride = 1, padding = 0, dilation = 1, groups = 1)`,
#'   `max_pool2d(kernel_size, stride = NULL, padding = 0, dilation = 1, ceil_mode = FALSE)`,
#'   `avg_pool2d(kernel_size, stride = NULL, padding = 0, ceil_mode = FALSE,
#'   count_include_pad = TRUE)`, `scaled_dot_product_attention(key, value, attn_mask = NULL,
#'   is_causal = FALSE)`, `rearrange(formula, ...)` (einops; sizes as named arguments).
#' * Like-constructors: `zeros_like()`, `ones_like()`, `rand_like()`, `randn_like()`,
#'   `full_like(fill_value)`.
#' @name tensor-methods
#' @examples
#' x <- pg_tensor(matrix(c(1, 2, 3, 4, 5, 6), nrow = 2))
#' x$sum(dim = 1, keepdim = TRUE)
#' x$softmax(2)
#' x$reshape(c(3, 2))$shape
NULL

.def <- function(name, f) assign(name, f, envir = .tensor_methods)

.unary_names <- c(
  "neg", "logical_not", "exp", "log", "exp2", "log2", "sqrt", "rsqrt", "square", "abs",
  "sign", "reciprocal", "sin", "cos", "tan", "ceil", "floor", "round", "trunc", "isnan",
  "isinf", "relu", "relu6", "sigmoid", "tanh", "gelu", "quick_gelu", "silu", "mish", "swish",
  "hardswish", "hardsigmoid", "detach", "clone", "contiguous", "isfinite", "log1p", "expm1",
  "log10", "sinh", "cosh", "asinh", "acosh", "atanh", "atan", "asin", "acos", "logsigmoid",
  "softsign", "selu", "zeros_like", "ones_like", "rand_like", "randn_like")
for (.n in .unary_names) {
  .def(.n, local({
    op <- .n
    function(self) .Call(C_pgr_unary, self, op)
  }))
}

.binary_names <- c(
  add = "add", sub = "sub", mul = "mul", div = "div", pow = "pow", remainder = "mod",
  floor_divide = "floordiv", maximum = "maximum", minimum = "minimum", eq = "eq", ne = "ne",
  lt = "lt", le = "le", gt = "gt", ge = "ge", logical_and = "logical_and",
  logical_or = "logical_or", bitwise_and = "bitwise_and", bitwise_or = "bitwise_or",
  bitwise_xor = "bitwise_xor", matmul = "matmul", dot = "dot", outer = "outer")
for (.n in names(.binary_names)) {
  .def(.n, local({
    op <- .binary_names[[.n]]
    function(self, other) .Call(C_pgr_binop, op, self, other)
  }))
}
rm(.n)

.def("leaky_relu", function(self, negative_slope = 0.01)
  .Call(C_pgr_param, self, "leaky_relu", negative_slope))
.def("elu", function(self, alpha = 1) .Call(C_pgr_param, self, "elu", alpha))
.def("celu", function(self, alpha = 1) .Call(C_pgr_param, self, "celu", alpha))
.def("softplus", function(self, beta = 1) .Call(C_pgr_param, self, "softplus", beta))
.def("hardtanh", function(self, min_val = -1, max_val = 1)
  .Call(C_pgr_hardtanh, self, min_val, max_val))
.def("clamp", function(self, min = NULL, max = NULL) .Call(C_pgr_clamp, self, min, max))
.def("clip", .tensor_methods$clamp)
.def("where", function(self, x, y) .Call(C_pgr_where, self, x, y))
.def("lerp", function(self, end, weight) .Call(C_pgr_lerp, self, end, weight))
.def("masked_fill", function(self, mask, value) .Call(C_pgr_masked_fill, self, mask, value))
.def("tril", function(self, diagonal = 0) .Call(C_pgr_tri, self, "tril", diagonal))
.def("triu", function(self, diagonal = 0) .Call(C_pgr_tri, self, "triu", diagonal))
.def("one_hot", function(self, num_classes = -1) .Call(C_pgr_one_hot, self, num_classes))
.def("full_like", function(self, fill_value) .Call(C_pgr_full_like, self, fill_value))
.def("dropout", function(self, p = 0.5, training = TRUE) {
  # composition: keep each element with probability 1 - p, scaled by 1 / (1 - p)
  if (!is.numeric(p) || length(p) != 1 || p < 0 || p > 1)
    .value_error("dropout: p must be a probability in [0, 1], not ", format(p))
  if (!training || p == 0) return(self)
  if (p == 1) return(self * 0)
  keep <- self$rand_like() >= p
  keep$where(self, 0) * (1 / (1 - p))
})

# ---- realisation, conversion, autograd ----------------------------------------------------

.def("realize", function(self) .Call(C_pgr_realize, self))
.def("item", function(self) .Call(C_pgr_item, self))
.def("numel", function(self) .Call(C_pgr_numel, self))
.def("size", function(self, dim = NULL) {
  s <- .Call(C_pgr_shape, self)
  if (is.null(dim)) return(s)
  s[[.r_dim(dim, length(s), "size")]]
})
.def("element_size", function(self) .Call(C_pgr_element_size, self))
.def("is_realized", function(self) .Call(C_pgr_is_realized, self))
.def("to", function(self, device = NULL, dtype = NULL) {
  out <- self
  if (!is.null(device)) out <- .Call(C_pgr_to, out, .checked_device(device))
  if (!is.null(dtype)) out <- .Call(C_pgr_cast, out, dtype)
  out
})
.def("cpu", function(self) .Call(C_pgr_to, self, "cpu"))
.def("cuda", function(self) .Call(C_pgr_to, self, .checked_device("cuda")))
.def("cast", function(self, dtype) .Call(C_pgr_cast, self, dtype))
.def("float", function(self) .Call(C_pgr_cast, self, "float32"))
.def("double", function(self) .Call(C_pgr_cast, self, "float64"))
.def("half", function(self) .Call(C_pgr_cast, self, "float16"))
.def("int", function(self) .Call(C_pgr_cast, self, "int32"))
.def("long", function(self) .Call(C_pgr_cast, self, "int64"))
.def("bool", function(self) .Call(C_pgr_cast, self, "bool"))
.def("assign", function(self, value) .Call(C_pgr_assign, self, value))
.def("requires_grad_", function(self, requires_grad = TRUE)
  .Call(C_pgr_set_requires_grad, self, requires_grad))
.def("backward", function(self, gradient = NULL) {
  if (!is.null(gradient)) gradient <- .as_operand(self, gradient)
  .Call(C_pgr_backward, self, gradient)
  .add_pending(self)
  invisible(self)
})

# ---- reductions and dims -------------------------------------------------------------------

# A 1-based R dim as a positive index into a shape of `nd` dims.
.r_dim <- function(dim, nd, op) {
  if (!is.numeric(dim) || length(dim) != 1 || dim != trunc(dim) || dim == 0 || abs(dim) > nd)
    .value_error(op, ": dim ", format(dim), " is out of range for a tensor of ", nd, " dims")
  if (dim < 0) nd + dim + 1 else dim
}

for (.n in c("sum", "mean", "prod", "max", "min", "any", "all")) {
  .def(.n, local({
    op <- .n
    function(self, dim = NULL, keepdim = FALSE) .Call(C_pgr_reduce, self, op, dim, keepdim)
  }))
}
rm(.n)
.def("var", function(self, dim = NULL, keepdim = FALSE, correction = 1)
  .Call(C_pgr_var_std, self, "var", dim, keepdim, correction))
.def("std", function(self, dim = NULL, keepdim = FALSE, correction = 1)
  .Call(C_pgr_var_std, self, "std", dim, keepdim, correction))
.def("argmax", function(self, dim = NULL, keepdim = FALSE)
  .Call(C_pgr_argext, self, "argmax", dim, keepdim))
.def("argmin", function(self, dim = NULL, keepdim = FALSE)
  .Call(C_pgr_argext, self, "argmin", dim, keepdim))
.def("logsumexp", function(self, dim = -1, keepdim = FALSE)
  .Call(C_pgr_logsumexp, self, dim, keepdim))
.def("softmax", function(self, dim = -1) .Call(C_pgr_axis_op, self, "softmax", dim))
.def("log_softmax", function(self, dim = -1) .Call(C_pgr_axis_op, self, "log_softmax", dim))
.def("cumsum", function(self, dim) .Call(C_pgr_axis_op, self, "cumsum", dim))
.def("unsqueeze", function(self, dim) .Call(C_pgr_axis_op, self, "unsqueeze", dim))
.def("reshape", function(self, shape) .Call(C_pgr_list_op, self, "reshape", shape))
.def("view", function(self, shape) .Call(C_pgr_list_op, self, "view", shape))
.def("expand", function(self, shape) .Call(C_pgr_list_op, self, "expand", shape))
.def("permute", function(self, dims) .Call(C_pgr_list_op, self, "permute", dims))
.def("flip", function(self, dims) .Call(C_pgr_list_op, self, "flip", dims))
.def("tile", function(self, times) .Call(C_pgr_list_op, self, "repeat", times))
.def("repeat_", .tensor_methods$tile)
.def("transpose", function(self, dim0 = -2, dim1 = -1)
  .Call(C_pgr_transpose, self, dim0, dim1))
.def("t", function(self) t.polygrad_tensor(self))
.def("squeeze", function(self, dim = NULL) .Call(C_pgr_squeeze, self, dim))
.def("flatten", function(self, start_dim = 1, end_dim = -1)
  .Call(C_pgr_flatten, self, start_dim, end_dim))
.def("unflatten", function(self, dim, sizes) .Call(C_pgr_unflatten, self, dim, sizes))
.def("shrink", function(self, bounds) {
  # list(c(first, last), ...) 1-based inclusive -> the C API's 0-based (begin, end)
  b <- unlist(lapply(bounds, function(p) c(p[[1]] - 1, p[[2]])))
  .Call(C_pgr_shrink, self, b)
})
.def("narrow", function(self, dim, start, length) {
  s <- .Call(C_pgr_shape, self)
  d <- .r_dim(dim, length(s), "narrow")
  bounds <- lapply(s, function(n) c(1, n))
  bounds[[d]] <- c(start, start + length - 1)
  self$shrink(bounds)
})
.pad_modes <- c(constant = 0L, reflect = 1L, replicate = 2L, circular = 3L)
.def("pad", function(self, pad, value = 0, mode = "constant") {
  m <- .pad_modes[mode]
  if (length(mode) != 1 || is.na(m)) .value_error("pad: mode must be one of ",
                                                   paste(names(.pad_modes), collapse = ", "))
  p <- if (is.matrix(pad)) as.vector(t(pad)) else unlist(pad)
  .Call(C_pgr_pad, self, p, m, value)
})
.def("roll", function(self, shifts, dims = NULL) .Call(C_pgr_roll, self, shifts, dims))
.def("split", function(self, split_size, dim = 1) {
  if (length(split_size) == 1) {
    n <- self$size(dim)
    split_size <- c(rep(split_size, n %/% split_size), if (n %% split_size) n %% split_size)
  }
  .Call(C_pgr_split, self, split_size, dim)
})
.def("chunk", function(self, chunks, dim = 1) .Call(C_pgr_chunk, self, chunks, dim))
.def("gather", function(self, dim, index) .Call(C_pgr_gather, self, dim, index))
.def("index_select", function(self, dim, index) {
  # composition: gather along dim with the positions broadcast over the other dims
  s <- .Call(C_pgr_shape, self)
  d <- .r_dim(dim, length(s), "index_select")
  if (!is_pg_tensor(index)) index <- .Call(C_pgr_from_r, as.integer(index), "int32", self$device)
  k <- index$numel()
  ishape <- rep(1, length(s))
  ishape[d] <- k
  s[d] <- k
  .Call(C_pgr_gather, self, d, index$reshape(ishape)$expand(s))
})

# ---- linear algebra and nn -------------------------------------------------------------------

.reductions <- c(mean = 0L, sum = 1L, none = 2L)
.reduction <- function(r) {
  v <- .reductions[r]
  if (length(r) != 1 || is.na(v)) .value_error("reduction must be \"mean\", \"sum\" or \"none\"")
  v
}
.pair <- function(v) if (length(v) == 1) c(v, v) else v

.def("linear", function(self, weight, bias = NULL) .Call(C_pgr_linear, self, weight, bias))
.def("layernorm", function(self, dim = -1, eps = 1e-5) .Call(C_pgr_layernorm, self, dim, eps))
.def("cross_entropy", function(self, target, dim = -1, label_smoothing = 0,
                               ignore_index = -100, reduction = "mean") {
  if (!is_pg_tensor(target))
    target <- .Call(C_pgr_from_r, target, if (is.integer(target)) "int32" else self$dtype,
                    self$device)
  .Call(C_pgr_cross_entropy, self, target, dim, label_smoothing, ignore_index,
        .reduction(reduction))
})
.def("binary_cross_entropy", function(self, target, reduction = "mean")
  .Call(C_pgr_bce, self, .as_operand(self, target), .reduction(reduction), FALSE, NULL))
.def("binary_cross_entropy_with_logits", function(self, target, pos_weight = NULL,
                                                  reduction = "mean") {
  if (!is.null(pos_weight)) pos_weight <- .as_operand(self, pos_weight)
  .Call(C_pgr_bce, self, .as_operand(self, target), .reduction(reduction), TRUE, pos_weight)
})
.def("conv2d", function(self, weight, bias = NULL, stride = 1, padding = 0, dilation = 1,
                        groups = 1)
  .Call(C_pgr_conv2d, self, weight, bias, groups, .pair(stride), .pair(dilation),
        .pair(padding)))
.def("max_pool2d", function(self, kernel_size, stride = NULL, padding = 0, dilation = 1,
                            ceil_mode = FALSE)
  .Call(C_pgr_max_pool2d, self, .pair(kernel_size), if (!is.null(stride)) .pair(stride),
        .pair(dilation), .pair(padding), ceil_mode))
.def("avg_pool2d", function(self, kernel_size, stride = NULL, padding = 0, ceil_mode = FALSE,
                            count_include_pad = TRUE)
  .Call(C_pgr_avg_pool2d, self, .pair(kernel_size), if (!is.null(stride)) .pair(stride),
        .pair(padding), ceil_mode, count_include_pad))
.def("scaled_dot_product_attention", function(self, key, value, attn_mask = NULL,
                                              is_causal = FALSE)
  .Call(C_pgr_sdpa, self, key, value, attn_mask, is_causal))
.def("rearrange", function(self, formula, ...) {
  sizes <- c(...)
  .Call(C_pgr_rearrange, self, formula, if (length(sizes)) sizes)
})
