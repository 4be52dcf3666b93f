# Package state and loading of libpolygrad.

.state <- new.env(parent = emptyenv())
.state$default_device <- NULL
.state$pending <- list()

#' @useDynLib polygrad, .registration = TRUE, .fixes = "C_"
NULL

# The libpolygrad to load: POLYGRAD_LIB when set, else the copy installed with the package
# (lib/libpolygrad.so, copied in by src/install.libs.R, with its plugins beside it in
# lib/polygrad/plugins, where libpolygrad's own discovery looks).
.library_candidates <- function(libname, pkgname) {
  env <- Sys.getenv("POLYGRAD_LIB")
  if (nzchar(env)) return(env)
  file.path(libname, pkgname, "lib", "libpolygrad.so")
}

.onLoad <- function(libname, pkgname) {
  .Call(C_pgr_init, environment(.onLoad))
  .Call(C_pgr_set_methods, .tensor_methods)
  tried <- character()
  for (path in .library_candidates(libname, pkgname)) {
    if (!file.exists(path)) {
      tried <- c(tried, paste0(path, " (missing)"))
      next
    }
    msg <- .Call(C_pgr_load, normalizePath(path))
    if (is.null(msg)) {
      .state$lib_path <- normalizePath(path)
      return(invisible())
    }
    tried <- c(tried, paste0(path, " (", msg, ")"))
  }
  stop("polygrad: cannot load libpolygrad: tried ", paste(tried, collapse = "; "),
       ". Set POLYGRAD_LIB to the library's path, or reinstall the package after building ",
       "the C++ core (cmake --build build/release).", call. = FALSE)
}
