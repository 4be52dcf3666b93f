# nn_module: modules as callable objects with fields, as in torch for R (without R6). An
# instance is a function (calling it runs forward) whose `self` is an environment holding the
# fields in the order they were set; methods see `self`.

#' Define a module
#'
#' `nn_module()` returns a generator: calling it with the `initialize` arguments makes a
#' module, and calling the module runs `forward`. Inside the methods, `self` is the module:
#' set fields with `self$name <- value` (tensors with `requires_grad` are parameters, other
#' tensors state, modules and lists of modules submodules).
#'
#' Every module has `$parameters` (a named list of the tensors with `requires_grad`, named as
#' in PyTorch: `"fc1.weight"`, lists counting from 0), `$state_dict()` (every tensor),
#' `$load_state_dict(state_dict, strict = TRUE)`, `$train(mode = TRUE)`, `$eval()`,
#' `$training`, `$children`, `$zero_grad()` and `$to(device = NULL, dtype = NULL)`. Modules
#' start in training mode, as in torch.
#' @param classname the class of the modules.
#' @param initialize `function(self-fields ...)` that sets the fields.
#' @param forward the computation.
#' @param ... more methods.
#' @return A module generator (a function).
#' @examples
#' mlp <- nn_module("mlp",
#'   initialize = function(n_in, n_hidden, n_out) {
#'     self$fc1 <- nn_linear(n_in, n_hidden)
#'     self$fc2 <- nn_linear(n_hidden, n_out)
#'   },
#'   forward = function(x) self$fc2(self$fc1(x)$relu())
#' )
#' model <- mlp(4, 8, 3)
#' names(model$parameters)
#' model(pg_randn(2, 4))$shape
#' @export
nn_module <- function(classname = NULL, initialize = NULL, forward = NULL, ...) {
  methods <- list(...)
  if (!is.null(initialize)) methods$initialize <- initialize
  if (!is.null(forward)) methods$forward <- forward
  force(classname)
  generator <- function(...) .new_module(classname, methods, list(...))
  class(generator) <- "nn_module_generator"
  generator
}

#' @export
print.nn_module_generator <- function(x, ...) {
  cat("<nn_module generator>\n")
  invisible(x)
}

.new_module <- function(classname, methods, args) {
  self <- new.env(parent = emptyenv())
  assign(".fields", character(), envir = self)
  assign("training", TRUE, envir = self)
  class(self) <- "polygrad_module_self"
  for (nm in names(methods)) {
    f <- methods[[nm]]
    menv <- new.env(parent = environment(f))
    assign("self", self, envir = menv)
    environment(f) <- menv
    assign(nm, f, envir = self)
  }
  if (exists("initialize", envir = self, inherits = FALSE)) do.call(self$initialize, args)
  module <- function(...) {
    f <- get0("forward", envir = self, inherits = FALSE)
    if (is.null(f)) .value_error("module ", classname[1], " has no forward method")
    f(...)
  }
  class(module) <- c(classname, "nn_module")
  module
}

.self_of <- function(module) environment(module)$self

.module_builtins <- c("parameters", "state_dict", "load_state_dict", "train", "eval",
                      "children", "zero_grad", "to")

.builtin <- function(self, name) {
  switch(name,
    parameters = .module_tensors(self, params_only = TRUE),
    state_dict = function() .module_tensors(self, params_only = FALSE),
    load_state_dict = function(state_dict, strict = TRUE) .load_state(self, state_dict, strict),
    train = function(mode = TRUE) {
      .set_training(self, mode)
      invisible(self)
    },
    eval = function() {
      .set_training(self, FALSE)
      invisible(self)
    },
    children = Filter(function(v) inherits(v, "nn_module"), .fields(self)),
    zero_grad = function() {
      for (p in .module_tensors(self, TRUE)) .Call(C_pgr_set_grad, p, NULL)
      invisible(NULL)
    },
    to = function(device = NULL, dtype = NULL) {
      .move_module(self, device, dtype)
      invisible(self)
    },
    NULL)
}

.lookup <- function(self, name) {
  v <- get0(name, envir = self, inherits = FALSE)
  if (!is.null(v) || exists(name, envir = self, inherits = FALSE)) return(v)
  .builtin(self, name)
}

#' @export
`$.polygrad_module_self` <- function(x, name) .lookup(x, name)

#' @export
`$<-.polygrad_module_self` <- function(x, name, value) {
  if (!exists(name, envir = x, inherits = FALSE) && !startsWith(name, "."))
    assign(".fields", c(get(".fields", envir = x), name), envir = x)
  assign(name, value, envir = x)
  x
}

#' @export
`$.nn_module` <- function(x, name) .lookup(.self_of(x), name)

#' @export
`$<-.nn_module` <- function(x, name, value) {
  self <- .self_of(x)
  `$<-.polygrad_module_self`(self, name, value)
  x
}

#' @export
`[[.nn_module` <- function(x, i) .lookup(.self_of(x), as.character(i))

#' @export
print.nn_module <- function(x, ...) {
  ps <- .module_tensors(.self_of(x), TRUE)
  n <- sum(vapply(ps, function(p) .Call(C_pgr_numel, p), 0))
  cat(sprintf("An nn_module (%s) with %s parameters\n", class(x)[[1]], format(n, big.mark = ",")))
  for (k in names(.fields(.self_of(x)))) {
    v <- get(k, envir = .self_of(x))
    if (inherits(v, "nn_module")) cat(sprintf("  %s: <%s>\n", k, class(v)[[1]]))
  }
  invisible(x)
}

# The fields in the order they were set, as a named list.
.fields <- function(self) {
  nms <- get(".fields", envir = self)
  stats::setNames(lapply(nms, get, envir = self), nms)
}

# Tensors of a module and its submodules, named "sub.name" (list elements counted from 0).
.module_tensors <- function(self, params_only) {
  out <- list()
  walk <- function(v, name) {
    if (is_pg_tensor(v)) {
      if (!params_only || .Call(C_pgr_requires_grad, v)) out[[name]] <<- v
    } else if (inherits(v, "nn_module")) {
      f <- .fields(.self_of(v))
      for (k in names(f)) walk(f[[k]], if (nzchar(name)) paste0(name, ".", k) else k)
    } else if (is.list(v) && !is.null(v) && !is.function(v)) {
      keys <- if (is.null(names(v))) as.character(seq_along(v) - 1) else names(v)
      for (i in seq_along(v)) {
        walk(v[[i]], if (nzchar(name)) paste0(name, ".", keys[[i]]) else keys[[i]])
      }
    }
  }
  f <- .fields(self)
  for (k in names(f)) walk(f[[k]], k)
  out
}

.set_training <- function(self, mode) {
  assign("training", isTRUE(mode), envir = self)
  for (v in .fields(self)) {
    if (inherits(v, "nn_module")) .set_training(.self_of(v), mode)
    if (is.list(v)) for (m in v) if (inherits(m, "nn_module")) .set_training(.self_of(m), mode)
  }
}

.load_state <- function(self, state_dict, strict) {
  own <- .module_tensors(self, FALSE)
  if (strict) {
    missing <- setdiff(names(own), names(state_dict))
    unexpected <- setdiff(names(state_dict), names(own))
    if (length(missing) || length(unexpected))
      .value_error("load_state_dict: missing keys [", paste(missing, collapse = ", "),
                   "], unexpected keys [", paste(unexpected, collapse = ", "), "]")
  }
  targets <- list()
  for (k in intersect(names(own), names(state_dict))) {
    t <- own[[k]]
    v <- state_dict[[k]]
    if (!is_pg_tensor(v)) v <- pg_tensor(v, dtype = t$dtype, device = t$device)
    if (!identical(as.numeric(v$shape), as.numeric(t$shape)))
      .value_error("load_state_dict: '", k, "' has shape (", paste(t$shape, collapse = ", "),
                   ") in the module, (", paste(v$shape, collapse = ", "), ") in the state dict")
    if (v$device != t$device) v <- v$to(t$device)
    t$assign(v)
    targets[[length(targets) + 1]] <- t
  }
  if (length(targets)) .Call(C_pgr_realize_all, targets)
  invisible(NULL)
}

# Replaces every tensor field (recursively) by its copy on `device` / in `dtype`.
.move_module <- function(self, device, dtype) {
  for (k in get(".fields", envir = self)) {
    v <- get(k, envir = self)
    if (is_pg_tensor(v)) {
      grad <- .Call(C_pgr_requires_grad, v)
      w <- v$to(device = device, dtype = dtype)
      if (grad) .Call(C_pgr_set_requires_grad, w, TRUE)
      assign(k, w, envir = self)
    } else if (inherits(v, "nn_module")) {
      .move_module(.self_of(v), device, dtype)
    } else if (is.list(v)) {
      for (m in v) if (inherits(m, "nn_module")) .move_module(.self_of(m), device, dtype)
    }
  }
}
