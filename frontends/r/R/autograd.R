# Autograd: backward() is a tensor method (methods.R); here with_no_grad, pg_gradient and the
# losses an optimizer step realises.

#' Evaluate code without recording gradients
#'
#' Every tensor made while `code` runs is detached from the graph: a `backward()` later does
#' not flow through it into tensors with `requires_grad`. Use it for updates written by hand
#' and for evaluation.
#' @param code R code.
#' @return The value of `code`.
#' @examples
#' w <- pg_tensor(c(1, 2), requires_grad = TRUE)
#' loss <- sum(w * w)
#' loss$backward()
#' with_no_grad(w$assign(w - 0.1 * w$grad))$realize()
#' as.numeric(w)
#' @export
with_no_grad <- function(code) {
  .Call(C_pgr_no_grad, 1L)
  on.exit(.Call(C_pgr_no_grad, -1L))
  force(code)
}

#' Gradients of a tensor with respect to others
#'
#' d(`output`)/d(`inputs`) as new tensors, without touching any `grad` (torch's
#' `autograd_grad`).
#' @param output a tensor (one element unless `grad_output` is given).
#' @param inputs a tensor or a list of tensors that `output` depends on.
#' @param grad_output the gradient flowing into `output` (`NULL`: ones).
#' @return A list of tensors, one per input.
#' @examples
#' x <- pg_tensor(c(1, 2, 3), requires_grad = TRUE)
#' g <- pg_gradient(sum(x^3), x)
#' as.numeric(g[[1]])
#' @export
pg_gradient <- function(output, inputs, grad_output = NULL) {
  if (is_pg_tensor(inputs)) inputs <- list(inputs)
  if (!is.null(grad_output)) grad_output <- .as_operand(output, grad_output)
  .Call(C_pgr_gradient, output, as.list(inputs), grad_output)
}

# Losses backward() was called on: an optimizer step realises them with the step's schedule,
# so reading one afterwards gives the value the gradients were taken at (and runs nothing).
.add_pending <- function(t) {
  p <- c(.state$pending, list(t))
  if (length(p) > 16) p <- p[(length(p) - 15):length(p)]
  .state$pending <- p
}

.take_pending <- function() {
  p <- Filter(function(t) !.Call(C_pgr_is_realized, t), .state$pending)
  .state$pending <- list()
  p
}

#' Memory of tensors R no longer references
#'
#' R's collector sees a tensor as a few bytes (its handle), not the memory behind it, so
#' polygrad counts the bytes of the tensors R holds and runs a collection (freeing the ones
#' nobody references) when they grow by the threshold, as torch for R does with
#' `torch.threshold_call_gc`. A lower threshold keeps less unreferenced memory, a higher one
#' collects less often (a full collection takes some milliseconds).
#' @param threshold_mb the threshold in MB (default 256); `NULL` leaves it.
#' @return The previous threshold in MB, invisibly.
#' @examples
#' old <- pg_gc_threshold(64)
#' pg_gc_threshold(old)
#' @export
pg_gc_threshold <- function(threshold_mb = NULL) {
  invisible(.Call(C_pgr_gc_threshold, threshold_mb))
}
