# Helpers: reference values computed in base R.

# An R array's values in row-major (C) order.
row_major <- function(a) {
  d <- dim(a)
  if (is.null(d) || length(d) < 2) return(as.vector(a))
  as.vector(aperm(a, rev(seq_along(d))))
}

# The array a tensor of `shape` holds when its row-major values are `v`.
from_row_major <- function(v, shape) {
  if (length(shape) < 2) return(array(v, shape))
  aperm(array(v, rev(shape)), rev(seq_along(shape)))
}

# numpy-style broadcasting of two arrays with base R: both expanded to the common shape.
broadcast_to <- function(a, shape) {
  d <- dim(a)
  if (is.null(d)) d <- length(a)
  d <- c(rep(1, length(shape) - length(d)), d)
  a <- array(a, d)
  idx <- lapply(seq_along(shape), function(k) if (d[k] == 1) rep(1, shape[k]) else seq_len(shape[k]))
  do.call(`[`, c(list(a), idx, drop = FALSE))
}

softmax_r <- function(v) exp(v - max(v)) / sum(exp(v - max(v)))

# Central finite differences of f (a function of an R array) at x, in double precision.
finite_diff <- function(f, x, h = 1e-6) {
  g <- x
  for (i in seq_along(x)) {
    xp <- x
    xm <- x
    xp[i] <- xp[i] + h
    xm[i] <- xm[i] - h
    g[i] <- (f(xp) - f(xm)) / (2 * h)
  }
  g
}
