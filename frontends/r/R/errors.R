# Errors: every failing C API call becomes an R condition whose class says its kind.

#' polygrad errors
#'
#' Every error polygrad raises is a condition of class `polygrad_error` carrying the core's
#' message, which names the op and the shapes (or the plugin and the call). A subclass says the
#' kind, from the C API's status code:
#'
#' * `polygrad_value_error`: a bad argument (shape, dim, dtype, device name, handle);
#' * `polygrad_index_error`: an index outside its dim (also a `polygrad_value_error`);
#' * `polygrad_device_error`: a device plugin failed (load, compile, launch, memory);
#' * `polygrad_internal_error`: a bug in polygrad, or the host ran out of memory.
#'
#' Catch them with [tryCatch()] by class.
#' @name polygrad_error
#' @examples
#' x <- pg_tensor(1:6)
#' tryCatch(x$reshape(c(4, 2)), polygrad_value_error = function(e) conditionMessage(e))
NULL

.error_classes <- list(
  "1" = "polygrad_value_error",
  "2" = "polygrad_device_error",
  "3" = "polygrad_internal_error",
  "4" = c("polygrad_index_error", "polygrad_value_error")
)

# Signals the condition of C API status `status` (called from src/api.c too).
.pg_signal <- function(status, message) {
  cls <- .error_classes[[as.character(status)]]
  if (is.null(cls)) cls <- "polygrad_internal_error"
  stop(structure(class = c(cls, "polygrad_error", "error", "condition"),
                 list(message = message, call = NULL)))
}

.value_error <- function(...) .pg_signal(1L, paste0(...))
.index_error <- function(...) .pg_signal(4L, paste0(...))
