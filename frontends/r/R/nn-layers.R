# Layers, written with tensor methods (each a composition of C API ops), as torch for R's.

.param <- function(t) .Call(C_pgr_set_requires_grad, t, TRUE)

# Uniform in [-bound, bound), realised (torch's default initialisation of weights and biases).
.uniform <- function(shape, bound) (pg_rand(shape) * (2 * bound) - bound)$realize()

#' Layers
#'
#' `nn_linear()` computes `x W^T + b`, with `W` (`out_features` x `in_features`) and `b`
#' uniform in \eqn{\pm 1/\sqrt{in\_features}} (torch's default). `nn_layernorm()` normalises
#' over the last `length(normalized_shape)` dims and scales and shifts by `weight` (ones) and
#' `bias` (zeros). `nn_embedding()` looks up rows of `weight` (standard normal) by 1-based
#' index (an integer tensor or R vector or array). `nn_dropout()` zeroes elements with
#' probability `p` and scales the rest by `1 / (1 - p)` while the module is in training mode
#' (`$train()`; `$eval()` turns it off). `nn_conv2d()` is a 2-d convolution of NCHW input, with
#' weight and bias uniform in \eqn{\pm 1/\sqrt{fan\_in}}. `nn_sequential()` applies its modules
#' in order; `nn_relu()`, `nn_sigmoid()`, `nn_tanh()` apply the activation.
#' @param in_features,out_features sizes of the input and output features.
#' @param bias whether the layer adds a bias.
#' @param normalized_shape the size(s) of the last dims to normalise over.
#' @param eps added to the variance.
#' @param elementwise_affine whether the layer has `weight` and `bias`.
#' @param num_embeddings,embedding_dim rows and columns of the embedding table.
#' @param p the probability of an element being zeroed.
#' @param in_channels,out_channels channels of the input and output.
#' @param kernel_size,stride,padding,dilation a number or `c(h, w)`.
#' @param groups blocked connections from input to output channels.
#' @param ... the modules of `nn_sequential()`.
#' @return A module (see [nn_module()]).
#' @examples
#' pg_manual_seed(0)
#' lin <- nn_linear(3, 2)
#' lin(pg_randn(4, 3))$shape
#' emb <- nn_embedding(10, 4)
#' emb(c(1L, 10L))$shape
#' net <- nn_sequential(nn_linear(4, 8), nn_relu(), nn_linear(8, 2))
#' names(net$parameters)
#' @name layers
NULL

#' @rdname layers
#' @export
nn_linear <- function(in_features, out_features, bias = TRUE) {
  .nn_linear(in_features, out_features, bias)
}
.nn_linear <- nn_module("nn_linear",
  initialize = function(in_features, out_features, bias = TRUE) {
    bound <- 1 / sqrt(in_features)
    self$weight <- .param(.uniform(c(out_features, in_features), bound))
    self$bias <- if (bias) .param(.uniform(out_features, bound))
  },
  forward = function(x) x$linear(self$weight, self$bias)
)

#' @rdname layers
#' @export
nn_layernorm <- function(normalized_shape, eps = 1e-5, elementwise_affine = TRUE) {
  .nn_layernorm(normalized_shape, eps, elementwise_affine)
}
.nn_layernorm <- nn_module("nn_layernorm",
  initialize = function(normalized_shape, eps = 1e-5, elementwise_affine = TRUE) {
    self$dims <- -seq_along(normalized_shape)
    self$eps <- eps
    if (elementwise_affine) {
      self$weight <- .param(pg_ones(normalized_shape)$realize())
      self$bias <- .param(pg_zeros(normalized_shape)$realize())
    }
  },
  forward = function(x) {
    y <- x$layernorm(self$dims, self$eps)
    if (is.null(self$weight)) y else y * self$weight + self$bias
  }
)

#' @rdname layers
#' @export
nn_embedding <- function(num_embeddings, embedding_dim) {
  .nn_embedding(num_embeddings, embedding_dim)
}
.nn_embedding <- nn_module("nn_embedding",
  initialize = function(num_embeddings, embedding_dim) {
    self$weight <- .param(pg_randn(num_embeddings, embedding_dim)$realize())
  },
  forward = function(x) {
    n <- self$weight$shape[[1]]
    if (!is_pg_tensor(x)) {
      if (any(x != trunc(x))) .value_error("nn_embedding: indices must be whole numbers")
      .check_positions(x, n)
      x <- pg_tensor(x, dtype = "int32", device = self$weight$device)
    } else if (x$is_realized()) {
      .check_positions(as.numeric(x), n)
    }
    # composition: gather the rows (1-based) of the table
    shape <- x$shape
    d <- self$weight$shape[[2]]
    idx <- x$reshape(c(-1, 1))$expand(c(x$numel(), d))
    self$weight$gather(1, idx)$reshape(c(shape, d))
  }
)

.check_positions <- function(v, n) {
  bad <- v[v < 1 | v > n]
  if (length(bad)) .index_error("nn_embedding: index ", bad[[1]], " is out of bounds for ", n,
                                " embeddings (indices count from 1)")
}

#' @rdname layers
#' @export
nn_dropout <- function(p = 0.5) .nn_dropout(p)
.nn_dropout <- nn_module("nn_dropout",
  initialize = function(p = 0.5) {
    if (!is.numeric(p) || p < 0 || p > 1) .value_error("nn_dropout: p must be in [0, 1]")
    self$p <- p
  },
  forward = function(x) x$dropout(self$p, training = self$training)
)

#' @rdname layers
#' @export
nn_conv2d <- function(in_channels, out_channels, kernel_size, stride = 1, padding = 0,
                      dilation = 1, groups = 1, bias = TRUE) {
  .nn_conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
}
.nn_conv2d <- nn_module("nn_conv2d",
  initialize = function(in_channels, out_channels, kernel_size, stride = 1, padding = 0,
                        dilation = 1, groups = 1, bias = TRUE) {
    k <- .pair(kernel_size)
    self$stride <- stride
    self$padding <- padding
    self$dilation <- dilation
    self$groups <- groups
    bound <- 1 / sqrt(in_channels / groups * k[[1]] * k[[2]])
    self$weight <- .param(.uniform(c(out_channels, in_channels / groups, k), bound))
    self$bias <- if (bias) .param(.uniform(out_channels, bound))
  },
  forward = function(x) x$conv2d(self$weight, self$bias, self$stride, self$padding,
                                 self$dilation, self$groups)
)

#' @rdname layers
#' @export
nn_sequential <- function(...) .nn_sequential(...)
.nn_sequential <- nn_module("nn_sequential",
  initialize = function(...) {
    mods <- list(...)
    for (i in seq_along(mods)) {
      if (!inherits(mods[[i]], "nn_module")) .value_error("nn_sequential: argument ", i,
                                                          " is not a module")
      `$<-.polygrad_module_self`(self, as.character(i - 1), mods[[i]])
    }
  },
  forward = function(x) {
    for (m in .fields(self)) if (inherits(m, "nn_module")) x <- m(x)
    x
  }
)

#' @rdname layers
#' @export
nn_relu <- function() .nn_relu()
.nn_relu <- nn_module("nn_relu", forward = function(x) x$relu())
#' @rdname layers
#' @export
nn_sigmoid <- function() .nn_sigmoid()
.nn_sigmoid <- nn_module("nn_sigmoid", forward = function(x) x$sigmoid())
#' @rdname layers
#' @export
nn_tanh <- function() .nn_tanh()
.nn_tanh <- nn_module("nn_tanh", forward = function(x) x$tanh())

#' Loss functions
#'
#' `nnf_cross_entropy()` is the cross-entropy of logits `input` (classes along `dim`) against
#' 1-based class indices (an integer tensor or R integer vector) or class probabilities (a
#' float tensor); `nnf_mse_loss()` the mean squared error; `nnf_binary_cross_entropy()` that of
#' probabilities.
#' @param input the predictions.
#' @param target the targets.
#' @param dim the class dim.
#' @param reduction `"mean"`, `"sum"` or `"none"`.
#' @param ... passed on (`label_smoothing`, `ignore_index`).
#' @return A tensor (0-d unless `reduction = "none"`).
#' @examples
#' logits <- pg_tensor(matrix(c(2, 0, 0, 1, 3, 0), nrow = 2))
#' as.numeric(nnf_cross_entropy(logits, c(1L, 2L)))
#' @name losses
NULL

#' @rdname losses
#' @export
nnf_cross_entropy <- function(input, target, dim = -1, reduction = "mean", ...) {
  input$cross_entropy(target, dim = dim, reduction = reduction, ...)
}

#' @rdname losses
#' @export
nnf_mse_loss <- function(input, target, reduction = "mean") {
  d <- (input - target)$square()
  switch(reduction, mean = d$mean(), sum = d$sum(), none = d,
         .value_error("reduction must be \"mean\", \"sum\" or \"none\""))
}

#' @rdname losses
#' @export
nnf_binary_cross_entropy <- function(input, target, reduction = "mean") {
  input$binary_cross_entropy(target, reduction = reduction)
}
