# Constructors: zeros, ones, full, empty, rand, randn, randint, arange, linspace, eye, and the
# *_like forms.

# The size of `...`: numbers, or one vector.
.size <- function(...) {
  s <- c(...)
  if (length(s) && (!is.numeric(s) || anyNA(s))) .value_error("size must be whole numbers")
  s
}

.finish <- function(t, requires_grad) {
  if (isTRUE(requires_grad)) .Call(C_pgr_set_requires_grad, t, TRUE)
  t
}

#' Create tensors
#'
#' `pg_zeros()`, `pg_ones()`, `pg_empty()` (unspecified values), `pg_rand()` (uniform in
#' \[0, 1)) and `pg_randn()` (standard normal) make a tensor of the size given as numbers or
#' one vector (`pg_zeros(2, 3)` or `pg_zeros(c(2, 3))`; no size is a 0-d tensor).
#' `pg_full()` fills with a value, `pg_randint()` draws integers in \[low, high).
#' `pg_arange()` counts from `start` to `end` by `step`, *including* `end` when the steps reach
#' it, as [seq()] and torch for R do; `pg_linspace()` gives `steps` values from `start` to
#' `end`; `pg_eye()` the identity. `pg_manual_seed()` seeds the random constructors (the same
#' values on every device).
#' @param ... the size: numbers, or one vector of them.
#' @param size the size, as one vector.
#' @param fill_value the value.
#' @param low,high the range of `pg_randint()`: `low` included, `high` excluded.
#' @param start,end,step,steps the range of `pg_arange()` and `pg_linspace()`.
#' @param n,m the identity's rows and columns.
#' @param dtype the element type (see [pg_tensor()]). `pg_arange()`'s default `NULL` is int32
#'   when start, end and step are whole numbers, float32 otherwise.
#' @param device a device name; `NULL` is the default device.
#' @param requires_grad whether the tensor accumulates gradients.
#' @param seed a whole number.
#' @return A `polygrad_tensor` (`pg_manual_seed()`: `NULL`, invisibly).
#' @examples
#' pg_zeros(2, 3)
#' pg_manual_seed(1)
#' pg_rand(2, 2)
#' as.numeric(pg_arange(1, 5))
#' as.numeric(pg_linspace(0, 1, 5))
#' as.matrix(pg_eye(3))
#' @name creation
NULL

.filler <- function(op) {
  force(op)
  function(..., dtype = "float32", device = NULL, requires_grad = FALSE)
    .finish(.Call(C_pgr_fill, op, .size(...), dtype, .device(device)), requires_grad)
}

#' @rdname creation
#' @export
pg_zeros <- .filler("zeros")
#' @rdname creation
#' @export
pg_ones <- .filler("ones")
#' @rdname creation
#' @export
pg_empty <- .filler("empty")
#' @rdname creation
#' @export
pg_rand <- .filler("rand")
#' @rdname creation
#' @export
pg_randn <- .filler("randn")

#' @rdname creation
#' @export
pg_full <- function(size, fill_value, dtype = "float32", device = NULL, requires_grad = FALSE) {
  .finish(.Call(C_pgr_full, .size(size), fill_value, dtype, .device(device)), requires_grad)
}

#' @rdname creation
#' @export
pg_randint <- function(low, high, size, dtype = "int32", device = NULL) {
  .Call(C_pgr_randint, low, high, .size(size), dtype, .device(device))
}

#' @rdname creation
#' @export
pg_arange <- function(start, end, step = 1, dtype = NULL, device = NULL, requires_grad = FALSE) {
  for (v in list(start, end, step))
    if (!is.numeric(v) || length(v) != 1 || !is.finite(v))
      .value_error("pg_arange: start, end and step must be finite numbers")
  if (step == 0) .value_error("pg_arange: step must not be 0")
  # end is included when the steps reach it (seq()); the C API's stop is excluded, so it goes
  # half a step past the last value
  count <- floor((end - start) / step + 1e-9) + 1
  if (count < 0) count <- 0
  stop <- start + (count - 0.5) * step
  if (is.null(dtype) && all(c(start, end, step) == trunc(c(start, end, step)))) {
    dtype <- "int32"
  }
  .finish(.Call(C_pgr_arange, start, stop, step, dtype, .device(device)), requires_grad)
}

#' @rdname creation
#' @export
pg_linspace <- function(start, end, steps, dtype = "float32", device = NULL,
                        requires_grad = FALSE) {
  .finish(.Call(C_pgr_linspace, start, end, steps, dtype, .device(device)), requires_grad)
}

#' @rdname creation
#' @export
pg_eye <- function(n, m = n, dtype = "float32", device = NULL, requires_grad = FALSE) {
  .finish(.Call(C_pgr_eye, n, m, dtype, .device(device)), requires_grad)
}

#' @rdname creation
#' @export
pg_manual_seed <- function(seed) {
  .Call(C_pgr_manual_seed, seed)
  invisible(NULL)
}

#' Tensors shaped like another
#'
#' A new tensor with `x`'s shape, dtype and device: zeros, ones, uniform \[0, 1), standard
#' normal, or `fill_value`.
#' @param x a `polygrad_tensor`.
#' @param fill_value the value of `pg_full_like()`.
#' @return A `polygrad_tensor`.
#' @examples
#' x <- pg_tensor(matrix(1:6, 2))
#' pg_ones_like(x)$shape
#' @name like
NULL

#' @rdname like
#' @export
pg_zeros_like <- function(x) .Call(C_pgr_unary, x, "zeros_like")
#' @rdname like
#' @export
pg_ones_like <- function(x) .Call(C_pgr_unary, x, "ones_like")
#' @rdname like
#' @export
pg_rand_like <- function(x) .Call(C_pgr_unary, x, "rand_like")
#' @rdname like
#' @export
pg_randn_like <- function(x) .Call(C_pgr_unary, x, "randn_like")
#' @rdname like
#' @export
pg_full_like <- function(x, fill_value) .Call(C_pgr_full_like, x, fill_value)

#' Join, select and combine tensors
#'
#' `pg_cat()` concatenates along an existing dim, `pg_stack()` along a new one;
#' `pg_where()` picks from `x` where `condition` is true, else from `y` (tensors or R values);
#' `pg_einsum()` is Einstein summation over the operands (`"ij,jk->ik"`);
#' `pg_realize_all()` runs the graphs of several tensors in one schedule.
#' @param tensors a list of tensors.
#' @param dim a 1-based dim (negative from the end).
#' @param condition a bool (or any) tensor.
#' @param x,y the values where `condition` is true and false.
#' @param equation the einsum formula.
#' @param ... the operands, or (for `pg_realize_all()`) tensors or lists of them.
#' @return A `polygrad_tensor` (`pg_realize_all()`: `NULL`, invisibly).
#' @examples
#' a <- pg_tensor(1:3)
#' as.numeric(pg_cat(list(a, a)))
#' pg_stack(list(a, a), dim = 2)$shape
#' as.numeric(pg_where(a > 1, a, 0))
#' as.matrix(pg_einsum("i,j->ij", a, a))
#' @name combine
NULL

#' @rdname combine
#' @export
pg_cat <- function(tensors, dim = 1) .Call(C_pgr_cat, as.list(tensors), dim)
#' @rdname combine
#' @export
pg_stack <- function(tensors, dim = 1) .Call(C_pgr_stack, as.list(tensors), dim)
#' @rdname combine
#' @export
pg_where <- function(condition, x, y) .Call(C_pgr_where, condition, x, y)
#' @rdname combine
#' @export
pg_einsum <- function(equation, ...) .Call(C_pgr_einsum, equation, list(...))
#' @rdname combine
#' @export
pg_realize_all <- function(...) {
  ts <- Filter(is_pg_tensor, unlist(list(...), recursive = TRUE))
  .Call(C_pgr_realize_all, ts)
  invisible(NULL)
}
