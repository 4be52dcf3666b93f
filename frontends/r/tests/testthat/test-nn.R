test_that("nn_linear is x W^T + b with torch's initial range", {
  pg_manual_seed(1)
  lin <- nn_linear(3, 2)
  w <- as.array(lin$weight)
  b <- as.array(lin$bias)
  expect_identical(dim(w), c(2L, 3L))
  expect_true(all(abs(w) <= 1 / sqrt(3)) && all(abs(b) <= 1 / sqrt(3)))
  x <- matrix(c(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), 4)
  expect_equal(as.array(lin(pg_tensor(x))), x %*% t(w) + matrix(b, 4, 2, byrow = TRUE),
               tolerance = 1e-6)
  expect_identical(names(lin$parameters), c("weight", "bias"))
  expect_null(nn_linear(3, 2, bias = FALSE)$bias)
  expect_identical(names(nn_linear(3, 2, bias = FALSE)$parameters), "weight")
})

test_that("nn_layernorm normalises over the last dims", {
  set.seed(9)
  x <- matrix(rnorm(12), 3, 4)
  ln <- nn_layernorm(4)
  ref <- t(apply(x, 1, function(v) (v - mean(v)) / sqrt(mean((v - mean(v))^2) + 1e-5)))
  expect_equal(as.array(ln(pg_tensor(x, dtype = "float64"))), ref, tolerance = 1e-6)
  ln$weight$assign(c(1, 2, 3, 4))
  ln$bias$assign(c(0, 0, 0, 1))
  expect_equal(as.array(ln(pg_tensor(x))), ref * matrix(1:4, 3, 4, byrow = TRUE) +
                 matrix(c(0, 0, 0, 1), 3, 4, byrow = TRUE), tolerance = 1e-5)
  x3 <- array(rnorm(24), c(2, 3, 4))
  ln2 <- nn_layernorm(c(3, 4), elementwise_affine = FALSE)
  r <- as.array(ln2(pg_tensor(x3, dtype = "float64")))
  s <- x3[2, , ]
  expect_equal(r[2, , ], (s - mean(s)) / sqrt(mean((s - mean(s))^2) + 1e-5), tolerance = 1e-6)
  expect_length(ln2$parameters, 0)
})

test_that("nn_embedding looks rows up by 1-based index", {
  emb <- nn_embedding(5, 3)
  w <- as.array(emb$weight)
  expect_equal(as.array(emb(c(2L, 5L, 2L))), w[c(2, 5, 2), ])
  idx <- matrix(c(1L, 3L, 4L, 5L), 2)
  r <- as.array(emb(idx))
  expect_identical(dim(r), c(2L, 2L, 3L))
  expect_equal(r[2, 1, ], w[3, ])
  expect_equal(r[1, 2, ], w[4, ])
  expect_error(emb(c(1L, 6L)), "index 6 is out of bounds", class = "polygrad_index_error")
  expect_error(emb(0L), "index 0 is out of bounds", class = "polygrad_index_error")
  # the table gets gradients
  loss <- sum(emb(c(2L, 2L, 4L)))
  loss$backward()
  expect_equal(as.array(emb$weight$grad), rbind(0, 2, 0, 1, 0) %*% t(c(1, 1, 1)))
})

test_that("nn_dropout zeroes and scales in training mode only", {
  pg_manual_seed(3)
  d <- nn_dropout(0.25)
  x <- pg_ones(1000)
  y <- as.numeric(d(x))
  expect_true(all(y == 0 | abs(y - 4 / 3) < 1e-6))
  expect_true(abs(mean(y == 0) - 0.25) < 0.05)
  d$eval()
  expect_false(d$training)
  expect_identical(as.numeric(d(x)), rep(1, 1000))
  d$train()
  expect_true(d$training)
  expect_error(nn_dropout(2), "p must be in")
})

test_that("nn_conv2d matches a convolution written in R", {
  set.seed(10)
  conv <- nn_conv2d(2, 3, kernel_size = 3, padding = 1)
  x <- array(rnorm(1 * 2 * 5 * 4), c(1, 2, 5, 4))
  w <- as.array(conv$weight)
  b <- as.array(conv$bias)
  y <- as.array(conv(pg_tensor(x)))
  expect_identical(dim(y), c(1L, 3L, 5L, 4L))
  xp <- array(0, c(2, 7, 6))
  xp[, 2:6, 2:5] <- x[1, , , ]
  ref <- array(0, c(3, 5, 4))
  for (o in 1:3) for (i in 1:5) for (j in 1:4)
    ref[o, i, j] <- sum(w[o, , , ] * xp[, i:(i + 2), j:(j + 2)]) + b[o]
  expect_equal(y[1, , , ], ref, tolerance = 1e-5)
  strided <- nn_conv2d(2, 1, kernel_size = c(2, 2), stride = 2, bias = FALSE)
  expect_identical(strided(pg_tensor(x))$shape, c(1L, 1L, 2L, 2L))
})

test_that("modules nest, name parameters as PyTorch and move state", {
  mlp <- nn_module("mlp",
    initialize = function(n) {
      self$fc1 <- nn_linear(n, 4)
      self$blocks <- list(nn_linear(4, 4), nn_linear(4, 2))
      self$scale <- pg_tensor(2)  # state, not a parameter
    },
    forward = function(x) {
      h <- self$fc1(x)$relu()
      for (b in self$blocks) h <- b(h)
      h * self$scale
    },
    n_params = function() length(self$parameters)
  )
  m <- mlp(3)
  expect_s3_class(m, "mlp")
  expect_s3_class(m, "nn_module")
  expect_identical(names(m$parameters), c("fc1.weight", "fc1.bias", "blocks.0.weight",
                                          "blocks.0.bias", "blocks.1.weight", "blocks.1.bias"))
  expect_identical(names(m$state_dict()), c(names(m$parameters), "scale"))
  expect_identical(m$n_params(), 6L)
  x <- matrix(c(0.5, -1, 2, 1, 0, -0.5), 2)
  h <- pmax(x %*% t(as.array(m$fc1$weight)) + matrix(as.array(m$fc1$bias), 2, 4, byrow = TRUE), 0)
  for (b in m$blocks) h <- h %*% t(as.array(b$weight)) + matrix(as.array(b$bias), 2, ncol(t(as.array(b$weight))), byrow = TRUE)
  expect_equal(as.array(m(pg_tensor(x))), h * 2, tolerance = 1e-5)
  m2 <- mlp(3)
  m2$load_state_dict(m$state_dict())
  expect_equal(as.array(m2(pg_tensor(x))), as.array(m(pg_tensor(x))))
  expect_error(m2$load_state_dict(list(fc1.weight = pg_zeros(4, 3))), "missing keys",
               class = "polygrad_value_error")
  bad <- m$state_dict()
  bad$fc1.weight <- pg_zeros(3, 3)
  expect_error(m2$load_state_dict(bad), "'fc1.weight' has shape \\(4, 3\\) in the module")
  m$to(dtype = "float64")
  expect_identical(m$fc1$weight$dtype, "float64")
  expect_true(m$fc1$weight$requires_grad)
  m$zero_grad()
  seq <- nn_sequential(nn_linear(3, 4), nn_relu(), nn_linear(4, 1))
  expect_identical(names(seq$parameters), c("0.weight", "0.bias", "2.weight", "2.bias"))
  expect_identical(seq(pg_randn(5, 3))$shape, c(5L, 1L))
})

test_that("losses match R", {
  z <- matrix(c(2, 0.5, -1, 1, 3, 0), 2)
  target <- c(3L, 2L)
  ref <- mean(c(-log(softmax_r(z[1, ]))[3], -log(softmax_r(z[2, ]))[2]))
  expect_equal(as.numeric(nnf_cross_entropy(pg_tensor(z, dtype = "float64"), target)), ref)
  expect_equal(as.numeric(nnf_cross_entropy(pg_tensor(z, dtype = "float64"),
                                            pg_tensor(target, dtype = "int32"), reduction = "sum")),
               2 * ref)
  expect_error(nnf_cross_entropy(pg_tensor(z), c(4L, 1L)), "index 4 is out of bounds",
               class = "polygrad_index_error")
  p <- c(0.2, 0.9)
  y <- c(0, 1)
  expect_equal(as.numeric(nnf_mse_loss(pg_tensor(p, dtype = "float64"), pg_tensor(y, dtype = "float64"))),
               mean((p - y)^2))
  expect_equal(as.numeric(nnf_binary_cross_entropy(pg_tensor(p, dtype = "float64"), y)),
               -mean(y * log(p) + (1 - y) * log(1 - p)))
})
