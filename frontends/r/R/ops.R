# R's operators and group generics on tensors, %*%, and indexing with [.

#' Operators and group generics
#'
#' Arithmetic (`+ - * / ^ %% %/%`), comparisons (`== != < <= > >=`, bool results) and logical
#' operators (`& | !`) work between tensors, and between a tensor and an R number, logical or
#' array, with broadcasting. A double scalar turns an integer tensor into float32, an integer
#' scalar keeps it; `%%` and `%/%` round toward minus infinity, as R's do.
#'
#' The `Math` group maps R's functions to the element-wise ops: `abs`, `sign`, `sqrt`,
#' `floor`, `ceiling`, `trunc`, `round` (to even, `digits = 0` only), `exp`, `expm1`, `log`
#' (with `base`), `log2`, `log10`, `log1p`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`,
#' `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh`, and `cumsum` of a 1-d tensor. The
#' `Summary` group (`sum`, `prod`, `max`, `min`, `all`, `any`, `range`) and [mean()] reduce
#' every element to a 0-d tensor (`range` to two elements). `%*%` is the matrix product
#' (`matmul`).
#' @param e1,e2,x tensors or R values (at least one a tensor).
#' @param ...,na.rm further arguments of the generic (`log(x, base)`, `round(x, digits)`);
#'   `na.rm` is not supported (NaN propagates).
#' @return A `polygrad_tensor`.
#' @examples
#' a <- pg_tensor(matrix(1:4, 2))
#' b <- pg_tensor(c(10, 20))
#' as.matrix(a + b)           # b broadcasts along the last dim
#' as.matrix(a %*% a)
#' as.numeric(sum(a))
#' as.matrix(exp(a) > 5)
#' @name Ops.polygrad_tensor
NULL

# Each operator has its own method rather than one Ops method: R looks for `+.polygrad_tensor`
# before `Ops.polygrad_tensor`, for each operand, so an Ops method costs every operator two
# failed lookups. e2 is NULL for a unary operator.

#' @rdname Ops.polygrad_tensor
#' @export
`+.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "+", e1, if (!missing(e2)) e2)
#' @rdname Ops.polygrad_tensor
#' @export
`-.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "-", e1, if (!missing(e2)) e2)
#' @rdname Ops.polygrad_tensor
#' @export
`*.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "*", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`/.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "/", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`^.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "^", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`%%.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "%%", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`%/%.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "%/%", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`==.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "==", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`!=.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "!=", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`<.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "<", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`<=.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "<=", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`>.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, ">", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`>=.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, ">=", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`&.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "&", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`|.polygrad_tensor` <- function(e1, e2) .Call(C_pgr_ops, "|", e1, e2)
#' @rdname Ops.polygrad_tensor
#' @export
`!.polygrad_tensor` <- function(x) .Call(C_pgr_ops, "!", x, NULL)

.math_ops <- c(
  abs = "abs", sign = "sign", sqrt = "sqrt", floor = "floor", ceiling = "ceil",
  trunc = "trunc", exp = "exp", expm1 = "expm1", log2 = "log2", log10 = "log10",
  log1p = "log1p", sin = "sin", cos = "cos", tan = "tan", asin = "asin", acos = "acos",
  atan = "atan", sinh = "sinh", cosh = "cosh", tanh = "tanh", asinh = "asinh",
  acosh = "acosh", atanh = "atanh")

#' @rdname Ops.polygrad_tensor
#' @export
Math.polygrad_tensor <- function(x, ...) {
  op <- .math_ops[.Generic]
  if (!is.na(op)) return(.Call(C_pgr_unary, x, op))
  switch(.Generic,
    round = {
      digits <- if (...length()) ..1 else 0
      if (digits != 0)
        .value_error("round: polygrad rounds to whole numbers only (digits = 0)")
      .Call(C_pgr_unary, x, "round")
    },
    log = {
      base <- list(...)$base
      if (is.null(base) && ...length() > 0) base <- ..1
      y <- .Call(C_pgr_unary, x, "log")
      if (is.null(base)) y else y / log(base)
    },
    cumsum = {
      if (length(x$shape) != 1) .value_error("cumsum: use x$cumsum(dim) for a tensor of ",
                                             length(x$shape), " dims")
      x$cumsum(1)
    },
    .value_error("Math function '", .Generic, "' is not supported for polygrad tensors")
  )
}

.summary_ops <- list(sum = c("sum", "add"), prod = c("prod", "mul"), max = c("max", "maximum"),
                     min = c("min", "minimum"), all = c("all", "logical_and"),
                     any = c("any", "logical_or"))

#' @rdname Ops.polygrad_tensor
#' @export
Summary.polygrad_tensor <- function(..., na.rm = FALSE) {
  if (isTRUE(na.rm)) .value_error(.Generic, ": na.rm = TRUE is not supported for tensors")
  args <- list(...)
  if (.Generic == "range") {
    lo <- do.call(min, args)
    hi <- do.call(max, args)
    return(.Call(C_pgr_stack, list(lo, hi), 1L))
  }
  ops <- .summary_ops[[.Generic]]
  out <- NULL
  for (a in args) {
    r <- if (is_pg_tensor(a)) .Call(C_pgr_reduce, a, ops[[1]], NULL, FALSE)
         else get(.Generic, baseenv())(a)
    out <- if (is.null(out)) r else .Call(C_pgr_binop, ops[[2]], out, r)
  }
  out
}

#' @rdname Ops.polygrad_tensor
#' @param dim,keepdim as the `mean` method (see [tensor-methods]).
#' @export
mean.polygrad_tensor <- function(x, dim = NULL, keepdim = FALSE, ...) {
  .Call(C_pgr_reduce, x, "mean", dim, keepdim)
}

#' @rdname Ops.polygrad_tensor
#' @param y the right operand of `%*%`.
#' @details `%*%` is a function of this package that masks base R's (R before 4.3 has no S3
#'   generic for it): with a tensor on either side it is `matmul` (an R matrix on the other
#'   side becomes a tensor), otherwise it calls base R's `%*%`.
#' @export
`%*%` <- function(x, y) {
  if (is_pg_tensor(x)) return(.Call(C_pgr_binop, "matmul", x, .as_operand(x, y)))
  if (is_pg_tensor(y)) return(.Call(C_pgr_binop, "matmul", .as_operand(y, x), y))
  base::`%*%`(x, y)
}

# ---- indexing ----------------------------------------------------------------------------------

#' Index a tensor
#'
#' `x[i, j, ...]` selects as R does, with 1-based indices, one per dim from the first (fewer
#' leave the rest whole): an empty index keeps the whole dim, a number picks one position
#' (negative numbers count from the end, as in torch for R: `-1` is the last), a range
#' (`2:4`, `seq(1, 9, by = 2)`, also decreasing) is a slice, any other integer vector or a
#' logical vector selects those positions (a gather). `NULL` adds a dim of size 1, and `..`
#' stands for as many whole dims as needed. A number drops its dim unless `drop = FALSE`.
#' Indices outside a dim are a `polygrad_index_error`.
#' @param x a `polygrad_tensor`.
#' @param ... one index per dim.
#' @param drop whether a single number drops its dim.
#' @return A `polygrad_tensor` (lazy).
#' @examples
#' x <- pg_tensor(array(1:24, c(2, 3, 4)))
#' x[1, , ]$shape
#' as.array(x[2, 2:3, -1])
#' x[.., 1]$shape
#' @export
`[.polygrad_tensor` <- function(x, ..., drop = TRUE) {
  dots <- match.call(expand.dots = FALSE)$...
  env <- parent.frame()
  shape <- .Call(C_pgr_shape, x)
  nd <- length(shape)
  # evaluate; classify each entry
  entries <- lapply(dots, function(d) {
    if (identical(d, quote(expr = ))) return(list(kind = "all"))
    if (is.name(d) && identical(as.character(d), "..")) return(list(kind = "ellipsis"))
    v <- eval(d, env)
    if (is.null(v)) return(list(kind = "new"))
    list(kind = "value", v = v)
  })
  kinds <- vapply(entries, `[[`, "", "kind")
  if (sum(kinds == "ellipsis") > 1) .value_error("[: more than one ..")
  used <- sum(kinds %in% c("all", "value"))
  if (used > nd) .index_error("[: ", used, " indices for a tensor of ", nd, " dims")
  # the tensor dim each entry indexes
  dim_of <- integer(length(entries))
  d <- 1L
  for (k in seq_along(entries)) {
    if (kinds[k] == "ellipsis") {
      d <- d + nd - used
    } else if (kinds[k] != "new") {
      dim_of[k] <- d
      d <- d + 1L
    }
  }
  ckind <- integer()
  cval <- numeric()
  selects <- list()
  for (k in seq_along(entries)) {
    e <- entries[[k]]
    spec <- switch(e$kind,
      all = list(1L, c(0, 0, 0, 0, 0, 1)),
      ellipsis = list(3L, c(0, 0, 0, 0, 0, 1)),
      new = list(2L, c(0, 0, 0, 0, 0, 1)),
      .index_spec(e$v, shape[dim_of[k]], dim_of[k], drop))
    if (!is.null(spec$select)) {
      selects[[length(selects) + 1]] <- list(dim = dim_of[k], index = spec$select)
      spec <- list(1L, c(0, 0, 0, 0, 0, 1))
    }
    ckind <- c(ckind, spec[[1]])
    cval <- c(cval, spec[[2]])
  }
  # selections first (dims still in place), then one getitem for the rest
  for (s in selects) x <- x$index_select(s$dim, s$index)
  if (length(ckind) == 0) return(x)
  .Call(C_pgr_getitem, x, ckind, cval)
}

# The pg_index of an R index `v` into a dim of size n: list(kind, c(value, has_start, start,
# has_stop, stop, step)), or list(select = positions) for a gather.
.index_spec <- function(v, n, dim, drop) {
  if (is_pg_tensor(v)) {
    .value_error("[: tensor indices are not supported; use x$gather() or x$index_select()")
  }
  if (is.logical(v)) {
    if (length(v) != n) .index_error("[: a logical index of length ", length(v),
                                     " for dim ", dim, " of size ", n)
    v <- which(v)
  }
  if (!is.numeric(v) || anyNA(v) || any(v != trunc(v)))
    .value_error("[: an index must be whole numbers, a logical vector, NULL or empty")
  bad <- v[v == 0 | v > n | v < -n]
  if (length(bad)) .index_error("[: index ", bad[[1]], " is out of bounds for dim ", dim,
                                " of size ", n)
  if (length(v) == 1) {
    i <- if (v > 0) v - 1 else v
    if (drop) return(list(0L, c(i, 0, 0, 0, 0, 1)))
    first <- if (v > 0) v - 1 else n + v
    return(list(1L, c(0, 1, first, 1, first + 1, 1)))
  }
  if (length(v) == 0) return(list(1L, c(0, 1, 0, 1, 0, 1)))
  p <- ifelse(v > 0, v, n + v + 1)  # positions 1..n
  step <- p[2] - p[1]
  if (step != 0 && all(diff(p) == step)) {
    first <- p[1] - 1
    last <- p[length(p)] - 1
    stop <- last + sign(step)
    if (stop < 0) return(list(1L, c(0, 1, first, 0, 0, step)))
    return(list(1L, c(0, 1, first, 1, stop, step)))
  }
  list(select = p)
}
