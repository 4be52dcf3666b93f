# safetensors files: an 8-byte little-endian header length, a JSON header
# {name: {dtype, shape, data_offsets}, __metadata__: {...}}, then the raw little-endian data.
# The bytes go straight between the file and the tensor (row-major both), so every dtype,
# float16 and bfloat16 included, reads and writes exactly; the Python package reads these
# files and writes files this reads.

.st_codes <- c(float32 = "F32", float64 = "F64", float16 = "F16", bfloat16 = "BF16",
               bool = "BOOL", int8 = "I8", int16 = "I16", int32 = "I32", int64 = "I64",
               uint8 = "U8", uint16 = "U16", uint32 = "U32", uint64 = "U64")

#' Save and load tensors in safetensors files
#'
#' `pg_save_safetensors()` writes a named list of tensors (R arrays are converted with
#' [pg_tensor()]) to a safetensors file, as a state dict from `model$state_dict()` is;
#' `pg_load_safetensors()` reads one back as a named list of tensors. Names and layout are
#' those of the Python package (`polygrad.nn.safe_save` / `safe_load`) and of HuggingFace's
#' files, so each reads the other's.
#' @param tensors a named list of tensors.
#' @param path the file.
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
  entries <- character()
  blobs <- list()
  offset <- 0
  for (name in names(tensors)) {
    t <- tensors[[name]]
    if (!is_pg_tensor(t)) t <- pg_tensor(t)
    bytes <- .Call(C_pgr_to_raw, t)
    shape <- paste(format(t$shape, scientific = FALSE, trim = TRUE), collapse = ",")
    entries <- c(entries, sprintf("%s:{\"dtype\":\"%s\",\"shape\":[%s],\"data_offsets\":[%s,%s]}",
                                  .json_string(name), .st_codes[[t$dtype]], shape,
                                  format(offset, scientific = FALSE),
                                  format(offset + length(bytes), scientific = FALSE)))
    blobs[[length(blobs) + 1]] <- bytes
    offset <- offset + length(bytes)
  }
  if (length(metadata)) {
    kv <- vapply(names(metadata), function(k)
      paste0(.json_string(k), ":", .json_string(as.character(metadata[[k]]))), "")
    entries <- c(sprintf("\"__metadata__\":{%s}", paste(kv, collapse = ",")), entries)
  }
  header <- charToRaw(enc2utf8(paste0("{", paste(entries, collapse = ","), "}")))
  header <- c(header, rep(charToRaw(" "), (8 - length(header) %% 8) %% 8))
  con <- file(path, "wb")
  on.exit(close(con))
  writeBin(.le_u64(length(header)), con)
  writeBin(header, con)
  for (b in blobs) writeBin(b, con)
  invisible(path)
}

#' @rdname safetensors
#' @export
pg_load_safetensors <- function(path, device = NULL) {
  size <- file.size(path)
  if (is.na(size)) .value_error("pg_load_safetensors: ", path, " does not exist")
  raw <- readBin(path, "raw", n = size)
  if (length(raw) < 8) .value_error("pg_load_safetensors: ", path, " is too short")
  n <- sum(as.numeric(raw[1:8]) * 256^(0:7))
  if (n > length(raw) - 8) .value_error("pg_load_safetensors: ", path, ": header length ", n,
                                        " is past the end of the file")
  header <- .json_parse(rawToChar(raw[9:(8 + n)]))
  base <- 8 + n
  out <- list()
  for (name in setdiff(names(header), "__metadata__")) {
    info <- header[[name]]
    dtype <- names(.st_codes)[.st_codes == info$dtype]
    if (!length(dtype)) .value_error("pg_load_safetensors: '", name, "' has dtype ", info$dtype,
                                     ", which polygrad does not hold")
    off <- unlist(info$data_offsets)
    if (off[[2]] + base > length(raw) || off[[1]] > off[[2]])
      .value_error("pg_load_safetensors: '", name, "' lies past the end of ", path)
    bytes <- if (off[[2]] > off[[1]]) raw[(base + off[[1]] + 1):(base + off[[2]])] else raw()
    out[[name]] <- .Call(C_pgr_from_raw, bytes, dtype, as.numeric(unlist(info$shape)),
                         .device(device))
  }
  attr(out, "metadata") <- header[["__metadata__"]]
  out
}

.le_u64 <- function(v) {
  bytes <- raw(8)
  for (i in 1:8) {
    bytes[i] <- as.raw(v %% 256)
    v <- v %/% 256
  }
  bytes
}
