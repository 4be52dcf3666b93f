# One step of each optimizer against its formula written in R (float64 parameters).

setup_param <- function(v) {
  p <- pg_tensor(v, dtype = "float64", requires_grad = TRUE)
  p
}

test_that("optim_sgd steps p - lr * g, with momentum and weight decay", {
  v <- c(1, -2, 3)
  p <- setup_param(v)
  opt <- optim_sgd(list(p), lr = 0.1)
  loss <- sum(p^2)  # g = 2 p
  loss$backward()
  opt$step()
  expect_equal(as.numeric(p), v - 0.1 * 2 * v)
  # the loss read after the step is the value the gradients were taken at
  expect_equal(loss$item(), sum(v^2))

  p <- setup_param(v)
  opt <- optim_sgd(list(p), lr = 0.1, momentum = 0.9, weight_decay = 0.01)
  ref <- v
  buf <- 0
  for (i in 1:3) {
    opt$zero_grad()
    sum(p^2)$backward()
    opt$step()
    g <- 2 * ref + 0.01 * ref
    buf <- if (i == 1) g else 0.9 * buf + g
    ref <- ref - 0.1 * buf
  }
  expect_equal(as.numeric(p), ref)
})

adam_ref <- function(v, steps, lr, b1, b2, eps, wd, decoupled) {
  m <- 0
  s <- 0
  p <- v
  for (t in seq_len(steps)) {
    g <- 2 * p
    if (!decoupled) g <- g + wd * p
    m <- b1 * m + (1 - b1) * g
    s <- b2 * s + (1 - b2) * g^2
    mh <- m / (1 - b1^t)
    vh <- s / (1 - b2^t)
    if (decoupled) p <- p * (1 - lr * wd)
    p <- p - lr * mh / (sqrt(vh) + eps)
  }
  p
}

test_that("optim_adam and optim_adamw follow PyTorch's formulas", {
  v <- c(0.5, -1.5, 2)
  for (case in list(list(f = optim_adam, wd = 0, dec = FALSE),
                    list(f = optim_adam, wd = 0.1, dec = FALSE),
                    list(f = optim_adamw, wd = 0.1, dec = TRUE))) {
    p <- setup_param(v)
    opt <- case$f(list(p), lr = 0.05, betas = c(0.8, 0.9), eps = 1e-8, weight_decay = case$wd)
    for (i in 1:3) {
      opt$zero_grad()
      sum(p^2)$backward()
      opt$step()
    }
    expect_equal(as.numeric(p), adam_ref(v, 3, 0.05, 0.8, 0.9, 1e-8, case$wd, case$dec))
  }
})

test_that("the learning rate can change between steps", {
  q <- setup_param(3)
  opt <- optim_sgd(list(q), lr = 0.1)
  expect_identical(opt$lr, 0.1)
  sum(q * 2)$backward()  # g = 2
  opt$step()
  expect_equal(as.numeric(q), 3 - 0.1 * 2)
  opt$zero_grad()
  expect_null(q$grad)
  opt$lr <- 0.5
  expect_identical(opt$lr, 0.5)
  sum(q * 2)$backward()
  opt$step()
  expect_equal(as.numeric(q), 3 - 0.1 * 2 - 0.5 * 2)
  expect_error(optim_sgd(list(), lr = 0.1), "no parameters")
})

test_that("a small model trains", {
  pg_manual_seed(42)
  model <- nn_linear(2, 1)
  opt <- optim_sgd(model$parameters, lr = 0.05)
  x <- pg_tensor(matrix(c(1, 3, 2, 4), 2))
  y <- pg_tensor(matrix(c(5, 11), 2))
  for (i in 1:200) {
    opt$zero_grad()
    loss <- nnf_mse_loss(model(x), y)
    loss$backward()
    opt$step()
  }
  expect_lt(loss$item(), 1e-3)
})
