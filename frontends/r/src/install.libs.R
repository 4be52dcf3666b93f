# Installs the package's shared object, and copies libpolygrad and its plugin folder (as
# configure found them, src/polygrad-paths) into lib/ of the installed package, where
# R/zzz.R loads the library and libpolygrad finds its plugins (<libdir>/polygrad/plugins).
files <- Sys.glob(paste0("*", SHLIB_EXT))
dest <- file.path(R_PACKAGE_DIR, paste0("libs", R_ARCH))
dir.create(dest, recursive = TRUE, showWarnings = FALSE)
file.copy(files, dest, overwrite = TRUE)
# (as R's own installation does: R CMD check reads the symbol tables of the objects)
if (file.exists("symbols.rds")) file.copy("symbols.rds", dest, overwrite = TRUE)

paths <- readLines("polygrad-paths")
lib <- file.path(R_PACKAGE_DIR, "lib")
plugins <- file.path(lib, "polygrad", "plugins")
dir.create(plugins, recursive = TRUE, showWarnings = FALSE)
stopifnot(file.copy(paths[[1]], file.path(lib, "libpolygrad.so"), overwrite = TRUE))
# the plugins (polygrad_*.so) and the libraries a plugin loads from its own folder
# (libpolygrad_*.so: the wasm plugin's v8 engine, the cuda and cpu_clang compiler libraries)
for (p in Sys.glob(file.path(paths[[2]], c("polygrad_*.so", "libpolygrad_*.so")))) {
  stopifnot(file.copy(p, plugins, overwrite = TRUE))
}
