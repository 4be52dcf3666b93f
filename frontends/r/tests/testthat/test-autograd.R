test_that("gradients match finite differences in double precision", {
  set.seed(7)
  x0 <- matrix(rnorm(6), 2, 3)
  w0 <- matrix(rnorm(12), 3, 4)
  f_r <- function(x, w) sum(tanh(x %*% w) * sin(x %*% w)) + sum(x^3) / 3
  x <- pg_tensor(x0, dtype = "float64", requires_grad = TRUE)
  w <- pg_tensor(w0, dtype = "float64", requires_grad = TRUE)
  y <- x %*% w
  loss <- sum(tanh(y) * sin(y)) + sum(x^3) / 3
  loss$backward()
  expect_equal(loss$item(), f_r(x0, w0))
  expect_equal(as.array(x$grad), finite_diff(function(v) f_r(v, w0), x0), tolerance = 1e-7)
  expect_equal(as.array(w$grad), finite_diff(function(v) f_r(x0, v), w0), tolerance = 1e-7)
})

test_that("softmax, cross-entropy and layernorm gradients match finite differences", {
  set.seed(8)
  z0 <- matrix(rnorm(12), 3, 4)
  target <- c(2L, 4L, 1L)
  ce_r <- function(z) mean(-log(t(apply(z, 1, softmax_r))[cbind(1:3, target)]))
  z <- pg_tensor(z0, dtype = "float64", requires_grad = TRUE)
  loss <- z$cross_entropy(target)
  expect_equal(loss$item(), ce_r(z0))
  loss$backward()
  expect_equal(as.array(z$grad), finite_diff(ce_r, z0), tolerance = 1e-7)

  ln_r <- function(z) {
    n <- t(apply(z, 1, function(v) (v - mean(v)) / sqrt(mean((v - mean(v))^2) + 1e-5)))
    sum(n * matrix(1:4, 3, 4, byrow = TRUE))
  }
  z2 <- pg_tensor(z0, dtype = "float64", requires_grad = TRUE)
  l2 <- (z2$layernorm() * pg_tensor(1:4, dtype = "float64"))$sum()
  expect_equal(l2$item(), ln_r(z0))
  l2$backward()
  expect_equal(as.array(z2$grad), finite_diff(ln_r, z0), tolerance = 1e-6)
})

test_that("gradients accumulate, clear, and reading a value keeps the graph", {
  x <- pg_tensor(c(1, 2, 3), dtype = "float64", requires_grad = TRUE)
  y <- x * x
  expect_equal(as.numeric(y), c(1, 4, 9))  # read before backward
  sum(y)$backward()
  expect_equal(as.numeric(x$grad), c(2, 4, 6))
  sum(x * 3)$backward()
  expect_equal(as.numeric(x$grad), c(5, 7, 9))
  x$grad <- NULL
  expect_null(x$grad)
  x$requires_grad <- FALSE
  expect_false(x$requires_grad)
  expect_error(pg_tensor(1:2, dtype = "int32", requires_grad = TRUE), class = "polygrad_value_error")
  expect_error(pg_tensor(c(1, 2), requires_grad = TRUE)$backward(), "backward",
               class = "polygrad_value_error")
})

test_that("pg_gradient returns gradients without touching grad", {
  x <- pg_tensor(c(1, 2, 3), dtype = "float64", requires_grad = TRUE)
  g <- pg_gradient(sum(x^3), x)
  expect_equal(as.numeric(g[[1]]), 3 * c(1, 2, 3)^2)
  expect_null(x$grad)
  v <- pg_gradient(x * 2, list(x), grad_output = c(1, 10, 100))
  expect_equal(as.numeric(v[[1]]), c(2, 20, 200))
})

test_that("with_no_grad detaches what it makes", {
  w <- pg_tensor(c(1, 2), dtype = "float64", requires_grad = TRUE)
  sum(w * w)$backward()
  with_no_grad({
    w$assign(w - 0.5 * w$grad)
  })
  w$grad <- NULL
  expect_equal(as.numeric(w), c(1, 2) - 0.5 * 2 * c(1, 2))
  h <- with_no_grad(w * 3)
  loss <- sum(h * w)  # d/dw = h only: h is a constant
  loss$backward()
  expect_equal(as.numeric(w$grad), as.numeric(h))
  expect_identical(with_no_grad(42), 42)
  # the depth is restored after an error
  expect_error(with_no_grad(stop("boom")), "boom")
  z <- pg_tensor(2, dtype = "float64", requires_grad = TRUE)
  (z * z)$sum()$backward()
  expect_equal(as.numeric(z$grad), 4)
})
