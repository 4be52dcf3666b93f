# safetensors files through the core's reader and writer (the C API's pg_safetensors_*): the
# same checks and messages as the Python package, every dtype's bytes moved exactly (row-major
# both in the file and in the tensor), sharded checkpoints through their index.

#' Save and load tensors in safetensors files
#'
#' `pg_save_safetensors()` writes a named list of tensors (R arrays are converted with
#' [pg_tensor()]) to a safetensors file, as a state dict from `model$state_dict()` is;
#' `pg_load_safetensors()` reads one back as a named list of tensors (or, given a sharded
#' checkpoint's `model.safetensors.index.json`, every shard it names). Names and layout are
#' those of the Python package (`polygrad.nn.safe_save` / `safe_load`) and of HuggingFace's
#' files, so each reads the other's.
#' @param tensors a named list of tensors.
#' @param path the file (for loading, a `.json` path is a sharded checkpoint's index).
#' @param metadata an optional named list or character vector of strings.
#' @param device the device of the loaded tensors (`NULL`: the default device).
#' @return `pg_save_safetensors()`: `path`, invisibly. `pg_load_safetensors()`: a named list
#'   of tensors (with the file's metadata as attribute `metadata`).
#' @examples
#' f <- tempfile(fileext = ".safetensors")
#' pg_save_safetensors(list(w = pg_tensor(matrix(1:6, 2))), f)
#' as.matrix(pg_load_safetensors(f)$w)
#' @name safetensors
NULL

#' @rdname safetensors
#' @export
pg_save_safetensors <- function(tensors, path, metadata = NULL) {
  if (!is.list(tensors) || is.null(names(tensors)) || any(!nzchar(names(tensors))))
    .value_error("pg_save_safetensors: tensors must be a named list")
  tensors <- lapply(tensors, function(t) if (is_pg_tensor(t)) t else pg_tensor(t))
  keys <- if (length(metadata)) names(metadata) else character()
  values <- vapply(metadata, function(v) as.character(v)[[1]], "", USE.NAMES = FALSE)
  .Call(C_pgr_safetensors_save, path.expand(path), names(tensors), unname(tensors), keys,
        values)
  invisible(path)
}

#' @rdname safetensors
#' @export
pg_load_safetensors <- function(path, device = NULL) {
  .Call(C_pgr_safetensors_load, path.expand(path), .device(device))
}
