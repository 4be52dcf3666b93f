# pg_tensor: construction from R data, conversion back, properties and printing.

.device <- function(device) {
  if (is.null(device)) .state$default_device else as.character(device)
}

#' Create a tensor from R data
#'
#' `pg_tensor()` copies an R vector, matrix or array into a new polygrad tensor. The tensor has
#' the array's dims (a vector is 1-d) and the same element at every index: R's column-major
#' order is converted, so `as.array(pg_tensor(a))` is `a` again.
#'
#' @param data a numeric, integer or logical vector, matrix or array, or a tensor (copied,
#'   moved to `device` or cast to `dtype` when they are given).
#' @param dtype the element type: `"float32"` (the default), `"float64"`, `"float16"`,
#'   `"bfloat16"`, `"int8"`, `"int16"`, `"int32"`, `"int64"`, `"uint8"`, `"uint16"`,
#'   `"uint32"`, `"uint64"` or `"bool"`. Integer dtypes take whole numbers only, in range;
#'   `NA` is `NaN` in a float tensor and an error otherwise.
#' @param device a device name such as `"cpu"` or `"cpu:0"`; `NULL` is the default device
#'   ([pg_default_device()]).
#' @param requires_grad whether gradients are accumulated for it (float tensors only).
#' @return A `polygrad_tensor`.
#' @seealso [tensor-methods] for what a tensor does, [as.array.polygrad_tensor()] for the way
#'   back.
#' @examples
#' x <- pg_tensor(matrix(1:6, nrow = 2))
#' x$shape
#' as.matrix(x * 2)
#' pg_tensor(c(TRUE, FALSE), dtype = "bool")
#' @export
pg_tensor <- function(data, dtype = "float32", device = NULL, requires_grad = FALSE) {
  if (is_pg_tensor(data)) {
    t <- if (is.null(device)) data$clone() else data$to(device)
    if (!missing(dtype) && !identical(dtype, t$dtype)) t <- t$cast(dtype)
  } else {
    t <- .Call(C_pgr_from_r, data, dtype, .device(device))
  }
  if (isTRUE(requires_grad)) .Call(C_pgr_set_requires_grad, t, TRUE)
  t
}

#' Is an object a polygrad tensor?
#' @param x any R object.
#' @return `TRUE` or `FALSE`.
#' @examples
#' is_pg_tensor(pg_tensor(1))
#' is_pg_tensor(1)
#' @export
is_pg_tensor <- function(x) inherits(x, "polygrad_tensor")

#' Convert a tensor to an R array, matrix or vector
#'
#' Realises the tensor (a graph not yet run is run on a detached copy, so gradients taken later
#' still flow through it) and copies its values into R: `double` for float dtypes, int64 and
#' uint32/uint64 (exact up to 2^53), `integer` for smaller int dtypes, `logical` for bool.
#' `as.array()` keeps the tensor's shape as `dim` (R's column-major order, so element
#' `[i, j, k]` is the tensor's element at those 1-based indices); `as.numeric()` and friends
#' give those values as a plain vector, in that column-major order; `as.matrix()` follows
#' [base::as.matrix()] on that array (a 1-d tensor becomes one column).
#' @param x a `polygrad_tensor`.
#' @param ... unused.
#' @return An array, matrix or vector.
#' @examples
#' a <- array(1:24, c(2, 3, 4))
#' identical(as.array(pg_tensor(a, dtype = "int32")), a)
#' as.numeric(pg_tensor(1:3) / 2)
#' @name as.array.polygrad_tensor
#' @export
as.array.polygrad_tensor <- function(x, ...) {
  v <- .Call(C_pgr_to_r, x)
  if (is.null(dim(v))) dim(v) <- 1L
  v
}

#' @rdname as.array.polygrad_tensor
#' @export
as.matrix.polygrad_tensor <- function(x, ...) as.matrix(as.array(x))

#' @rdname as.array.polygrad_tensor
#' @export
as.double.polygrad_tensor <- function(x, ...) as.double(.Call(C_pgr_to_r, x))

#' @rdname as.array.polygrad_tensor
#' @export
as.integer.polygrad_tensor <- function(x, ...) as.integer(.Call(C_pgr_to_r, x))

#' @rdname as.array.polygrad_tensor
#' @export
as.logical.polygrad_tensor <- function(x, ...) as.logical(.Call(C_pgr_to_r, x))

#' @export
dim.polygrad_tensor <- function(x) .Call(C_pgr_shape, x)

#' @export
length.polygrad_tensor <- function(x) .Call(C_pgr_numel, x)

#' @export
t.polygrad_tensor <- function(x) {
  if (length(.Call(C_pgr_shape, x)) > 2) .value_error("t: the tensor has more than 2 dims")
  .Call(C_pgr_unary, x, "T")
}

# ---- properties and methods ($) -----------------------------------------------------------

# x$name is src/dollar.c: the properties below, computed there, or a method of
# .tensor_methods (methods.R) bound to x.
.tensor_property_names <- c("shape", "ndim", "dtype", "device", "requires_grad", "grad", "T")

# (filled by the files that define the methods; see methods.R)
.tensor_methods <- new.env(parent = emptyenv())

#' @export
`$.polygrad_tensor` <- function(x, name) .Call(C_pgr_dollar, x, name)

#' @export
`$<-.polygrad_tensor` <- function(x, name, value) {
  switch(name,
    requires_grad = .Call(C_pgr_set_requires_grad, x, isTRUE(value)),
    grad = .Call(C_pgr_set_grad, x, if (is.null(value)) NULL else .as_operand(x, value)),
    .value_error("a polygrad_tensor's '", name, "' cannot be set (only requires_grad and grad)")
  )
  invisible(x)
}

#' @export
`[[.polygrad_tensor` <- function(x, i) .value_error("use x[i] or x$name, not x[[...]]")

#' @importFrom utils .DollarNames
#' @export
.DollarNames.polygrad_tensor <- function(x, pattern = "") {
  n <- sort(c(.tensor_property_names, ls(.tensor_methods)))
  n[grepl(pattern, n)]
}

# `v` as a tensor to combine with x: itself when it is one, else R data on x's device (x's
# dtype for numbers when x is float).
.as_operand <- function(x, v) {
  if (is_pg_tensor(v)) return(v)
  dtype <- if (is.logical(v)) "bool" else if (.is_float(x$dtype)) x$dtype
           else if (is.integer(v)) "int32" else "float32"
  .Call(C_pgr_from_r, v, dtype, x$device)
}

.is_float <- function(dtype) dtype %in% c("float16", "bfloat16", "float32", "float64")

# ---- printing ----------------------------------------------------------------------------

#' Print or format a tensor
#'
#' Shows the values as torch for R does: a 1-d tensor as a column, a matrix as rows, higher
#' dims as a matrix per index of the leading dims (`(1,2,.,.) =`), then a footer with dtype,
#' shape, device, and `requires_grad` when set. Printing runs the graph on a detached copy.
#' @param x a `polygrad_tensor`.
#' @param ... passed to [base::format()] for the numbers (e.g. `digits`).
#' @param max_elements tensors with more elements show the footer only.
#' @return `format()` returns the lines; `print()` returns `x` invisibly.
#' @examples
#' pg_tensor(array(1:8, c(2, 2, 2)))
#' @export
format.polygrad_tensor <- function(x, ..., max_elements = getOption("polygrad.print_max", 1000)) {
  shape <- x$shape
  n <- prod(shape)
  footer <- sprintf("[ %s{%s} on %s ]", x$dtype, paste(shape, collapse = ","), x$device)
  if (x$requires_grad) footer <- paste0(footer, "[ requires_grad = TRUE ]")
  if (n > max_elements) {
    return(c("polygrad_tensor", sprintf("... %s elements (as.array(x) gives them)", format(n)),
             footer))
  }
  v <- .Call(C_pgr_to_r, x)
  body <- if (n == 0) "[ empty ]" else .format_values(v, shape, ...)
  c("polygrad_tensor", body, footer)
}

.format_values <- function(v, shape, ...) {
  s <- format(as.vector(v), ...)
  nd <- length(shape)
  if (nd == 0) return(s)
  if (nd == 1) return(s)
  rows <- function(m) apply(m, 1, paste, collapse = " ")
  dim(s) <- shape
  if (nd == 2) return(rows(s))
  lead <- shape[seq_len(nd - 2)]
  out <- character()
  idx <- as.matrix(expand.grid(lapply(lead, seq_len)))
  for (r in seq_len(nrow(idx))) {
    i <- idx[r, ]
    m <- matrix(s[.slice_offsets(i, shape)], nrow = shape[nd - 1], ncol = shape[nd])
    out <- c(out, sprintf("(%s,.,.) = ", paste(i, collapse = ",")), rows(m), "")
  }
  out[-length(out)]
}

# Linear (column-major) offsets of the matrix x[i..., , ] of an array of dim `shape`.
.slice_offsets <- function(i, shape) {
  nd <- length(shape)
  stride <- cumprod(c(1, shape[-nd]))
  base <- sum((i - 1) * stride[seq_len(nd - 2)])
  rr <- rep(seq_len(shape[nd - 1]) - 1, times = shape[nd])
  cc <- rep(seq_len(shape[nd]) - 1, each = shape[nd - 1])
  base + rr * stride[nd - 1] + cc * stride[nd] + 1
}

#' @rdname format.polygrad_tensor
#' @export
print.polygrad_tensor <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}
