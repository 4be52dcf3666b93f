# Devices and plugins: the registry as the C API exposes it.

#' Devices, plugins and the load report
#'
#' `pg_devices()` lists the usable devices of the loaded plugins. `pg_load_report()` gives
#' every plugin load attempt: where the file was found, whether it loaded, and if not the exact
#' reason (the dynamic loader's message, the ABI versions, the missing symbol, the init status).
#' `pg_default_device()` returns the device tensors are made on when no device is named, and
#' with an argument sets it for this R session (`NULL` goes back to polygrad's own default:
#' `POLYGRAD_DEVICE`, else the config file's `default_device`, else `"cpu"`); it returns the
#' previous one invisibly. `pg_load_plugin()` loads a plugin by name (`"cpu_clang"`) or path.
#'
#' polygrad reads its YAML config (`POLYGRAD_CONFIG`, `./polygrad.yaml`, or the user config
#' directory) and `POLYGRAD_PLUGIN_PATH` when it first looks for plugins, as the Python package
#' does.
#' @param device a device name (`"cpu"`, `"cpu:0"`, `"cuda:1"`) or `NULL`.
#' @param name_or_path a plugin name or the path of its `.so`.
#' @return `pg_devices()`: a data.frame with columns `name`, `type`, `index`, `plugin` and
#'   `default`. `pg_load_report()`: a data.frame with one row per load attempt (`path`,
#'   `source`, `status`, `stage`, `plugin`, `version`, `abi`, `device_count`, `reason`) and
#'   the config file's path and error as attributes `config` and `config_error`.
#'   `pg_default_device()`: a device name. `pg_load_plugin()`: the plugin's name.
#' @examples
#' pg_devices()
#' pg_load_report()[, c("plugin", "status", "device_count")]
#' pg_default_device()
#' @name devices
NULL

#' @rdname devices
#' @export
pg_devices <- function() {
  names <- strsplit(.Call(C_pgr_device_list), "\n", fixed = TRUE)[[1]]
  names <- names[nzchar(names)]
  report <- pg_load_report()
  loaded <- report[report$status == "loaded", , drop = FALSE]
  type <- sub(":.*$", "", names)
  plugin <- vapply(type, function(p) {
    hit <- loaded$plugin[loaded$device_prefix == p]
    if (length(hit)) hit[[1]] else NA_character_
  }, "", USE.NAMES = FALSE)
  default <- .Call(C_pgr_device_canonical, pg_default_device())
  data.frame(name = names, type = type, index = as.integer(sub("^.*:", "", names)),
             plugin = plugin, default = names == default, stringsAsFactors = FALSE)
}

#' @rdname devices
#' @export
pg_load_report <- function() {
  rep <- .json_parse(.Call(C_pgr_plugin_report, TRUE))
  field <- function(r, k, empty) if (is.null(r[[k]])) empty else r[[k]]
  records <- rep$records
  df <- data.frame(
    path = vapply(records, field, "", "path", NA_character_),
    source = vapply(records, field, "", "source", NA_character_),
    status = vapply(records, field, "", "status", NA_character_),
    stage = vapply(records, field, "", "stage", NA_character_),
    plugin = vapply(records, field, "", "plugin", NA_character_),
    version = vapply(records, field, "", "version", NA_character_),
    abi = vapply(records, field, "", "abi", NA_character_),
    device_prefix = vapply(records, field, "", "device_prefix", NA_character_),
    device_count = vapply(records, function(r) as.integer(field(r, "device_count", NA)), 1L),
    reason = vapply(records, field, "", "reason", ""),
    stringsAsFactors = FALSE)
  attr(df, "config") <- rep$config
  attr(df, "config_error") <- rep$config_error
  df
}

#' @rdname devices
#' @export
pg_default_device <- function(device) {
  current <- if (is.null(.state$default_device)) .Call(C_pgr_device_default)
             else .state$default_device
  if (missing(device)) return(current)
  .state$default_device <- if (is.null(device)) NULL else .checked_device(device)
  invisible(current)
}

#' @rdname devices
#' @export
pg_load_plugin <- function(name_or_path) .Call(C_pgr_plugin_load, name_or_path)

# The canonical name of `device`, or a polygrad_device_error that names the devices there are
# and carries the plugin load report (why a plugin did not give the device asked for).
.checked_device <- function(device) {
  tryCatch(.Call(C_pgr_device_canonical, as.character(device)),
    polygrad_value_error = function(e) {
      .pg_signal(2L, paste0(conditionMessage(e), "\nPlugin load report:\n",
                            .Call(C_pgr_plugin_report, FALSE)))
    })
}
