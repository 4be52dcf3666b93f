# Optimizers, as the Python package's: each step builds every parameter's update as tensor
# ops, writes it with assign, and realises parameters, gradients, optimizer state and the
# pending losses in one schedule. The learning rate and Adam's bias corrections live in tensors,
# so a schedule that changes them reruns the same compiled kernels.

#' Optimizers
#'
#' `optim_sgd()` (momentum, Nesterov, L2 weight decay), `optim_adam()` (weight decay added to
#' the gradient) and `optim_adamw()` (decoupled weight decay) update their parameters with
#' `$step()`, from the gradients `backward()` left, and clear those with `$zero_grad()`, with
#' PyTorch's formulas. `opt$lr` reads the learning rate and `opt$lr <- value` sets it.
#' @param params a list of tensors (e.g. `model$parameters`); each gets `requires_grad`.
#' @param lr the learning rate.
#' @param momentum,nesterov SGD's momentum, and whether it is Nesterov's.
#' @param betas Adam's coefficients of the running averages of the gradient and its square.
#' @param eps added to the denominator.
#' @param weight_decay the weight decay.
#' @return An optimizer (an environment of class `polygrad_optimizer`).
#' @examples
#' pg_manual_seed(0)
#' model <- nn_linear(2, 1)
#' opt <- optim_sgd(model$parameters, lr = 0.1)
#' x <- pg_tensor(matrix(c(1, 3, 2, 4), 2))
#' y <- pg_tensor(matrix(c(5, 11), 2))
#' for (i in 1:50) {
#'   opt$zero_grad()
#'   loss <- nnf_mse_loss(model(x), y)
#'   loss$backward()
#'   opt$step()
#' }
#' loss$item()
#' @name optimizers
NULL

.optimizer <- function(classname, params, lr) {
  if (is_pg_tensor(params)) params <- list(params)
  params <- Filter(is_pg_tensor, unname(as.list(params)))
  if (!length(params)) .value_error(classname, ": no parameters")
  seen <- list()
  for (p in params) {
    if (any(vapply(seen, identical, TRUE, p))) next
    if (!.Call(C_pgr_requires_grad, p)) .Call(C_pgr_set_requires_grad, p, TRUE)
    seen[[length(seen) + 1]] <- p
  }
  o <- new.env(parent = emptyenv())
  class(o) <- c(classname, "polygrad_optimizer")
  assign("params", seen, envir = o)
  # float64, so a float64 parameter steps by the lr given, not by it rounded to float32
  assign("lr_t", .Call(C_pgr_scalar, lr, "float64", seen[[1]]$device)$realize(), envir = o)
  assign("lr_value", lr, envir = o)
  assign("zero_grad", function() {
    for (p in o$params) .Call(C_pgr_set_grad, p, NULL)
    invisible(NULL)
  }, envir = o)
  assign("state", function() list(), envir = o)
  assign("step", function() .optimizer_step(o), envir = o)
  o
}

# lr as a tensor of t's dtype on t's device.
.lr_as <- function(o, t) {
  lr <- o$lr_t
  if (lr$device != t$device) lr <- lr$to(t$device)
  lr$cast(t$dtype)
}

.optimizer_step <- function(o) {
  targets <- .take_pending()
  if (!is.null(o$before_step)) o$before_step()
  for (i in seq_along(o$params)) {
    p <- o$params[[i]]
    g <- .Call(C_pgr_grad, p)
    if (is.null(g)) next
    targets <- c(targets, list(g, p))
    .Call(C_pgr_assign, p, o$update(i, p$detach(), g))
  }
  targets <- c(targets, o$state())
  if (length(targets)) .Call(C_pgr_realize_all, targets)
  invisible(NULL)
}

#' @export
`$.polygrad_optimizer` <- function(x, name) {
  if (identical(name, "lr")) return(get("lr_value", envir = x))
  get0(name, envir = x, inherits = FALSE)
}

#' @export
`$<-.polygrad_optimizer` <- function(x, name, value) {
  if (identical(name, "lr")) {
    if (!is.numeric(value) || length(value) != 1) .value_error("lr must be one number")
    assign("lr_value", value, envir = x)
    x$lr_t$assign(.Call(C_pgr_scalar, value, "float64", x$lr_t$device))$realize()
  } else {
    assign(name, value, envir = x)
  }
  x
}

#' @export
print.polygrad_optimizer <- function(x, ...) {
  cat(sprintf("<%s> lr = %s, %d parameter tensors\n", class(x)[[1]], format(x$lr),
              length(x$params)))
  invisible(x)
}

#' @rdname optimizers
#' @export
optim_sgd <- function(params, lr = 0.01, momentum = 0, weight_decay = 0, nesterov = FALSE) {
  o <- .optimizer("optim_sgd", params, lr)
  bufs <- if (momentum != 0) lapply(o$params, function(p) p$zeros_like()$realize()) else list()
  assign("state", function() bufs, envir = o)
  assign("update", function(i, p, g) {
    if (weight_decay != 0) g <- g + p * weight_decay
    if (momentum != 0) {
      b <- bufs[[i]]$assign(bufs[[i]] * momentum + g)
      g <- if (nesterov) g + b * momentum else b
    }
    p - g * .lr_as(o, g)
  }, envir = o)
  o
}

.adam <- function(classname, params, lr, betas, eps, weight_decay, decoupled) {
  o <- .optimizer(classname, params, lr)
  b1 <- betas[[1]]
  b2 <- betas[[2]]
  m <- lapply(o$params, function(p) p$zeros_like()$realize())
  v <- lapply(o$params, function(p) p$zeros_like()$realize())
  # b1^t and b2^t of each parameter (one that gets no gradient in a step does not advance)
  b1_t <- lapply(o$params, function(p) .Call(C_pgr_scalar, 1, "float64", p$device)$realize())
  b2_t <- lapply(o$params, function(p) .Call(C_pgr_scalar, 1, "float64", p$device)$realize())
  assign("state", function() c(m, v, b1_t, b2_t), envir = o)
  assign("update", function(i, p, g) {
    if (weight_decay != 0 && !decoupled) g <- g + p * weight_decay
    mi <- m[[i]]$assign(m[[i]] * b1 + g * (1 - b1))
    vi <- v[[i]]$assign(v[[i]] * b2 + g$square() * (1 - b2))
    c1 <- b1_t[[i]]$assign(b1_t[[i]] * b1)
    c2 <- b2_t[[i]]$assign(b2_t[[i]] * b2)
    m_hat <- mi / (1 - c1)$cast(mi$dtype)
    v_hat <- vi / (1 - c2)$cast(vi$dtype)
    upd <- m_hat / (v_hat$sqrt() + eps)
    if (weight_decay != 0 && decoupled) p <- p * (1 - .lr_as(o, p) * weight_decay)
    p - upd * .lr_as(o, upd)
  }, envir = o)
  o
}

#' @rdname optimizers
#' @export
optim_adam <- function(params, lr = 0.001, betas = c(0.9, 0.999), eps = 1e-8, weight_decay = 0) {
  .adam("optim_adam", params, lr, betas, eps, weight_decay, decoupled = FALSE)
}

#' @rdname optimizers
#' @export
optim_adamw <- function(params, lr = 0.001, betas = c(0.9, 0.999), eps = 1e-8,
                        weight_decay = 0.01) {
  .adam("optim_adamw", params, lr, betas, eps, weight_decay, decoupled = TRUE)
}
