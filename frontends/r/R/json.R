# A small JSON reader: enough for the plugin load report (objects, arrays, strings, numbers,
# true, false, null).

.json_parse <- function(text) {
  chars <- strsplit(enc2utf8(text), "")[[1]]
  pos <- 1L
  n <- length(chars)
  fail <- function(what) .value_error("JSON: ", what, " at character ", pos)
  skip <- function() {
    while (pos <= n && chars[pos] %in% c(" ", "\t", "\n", "\r")) pos <<- pos + 1L
  }
  value <- function() {
    skip()
    if (pos > n) fail("unexpected end")
    ch <- chars[pos]
    if (ch == "{") return(object())
    if (ch == "[") return(array())
    if (ch == "\"") return(string())
    if (ch == "t") return(literal("true", TRUE))
    if (ch == "f") return(literal("false", FALSE))
    if (ch == "n") return(literal("null", NULL))
    number()
  }
  literal <- function(word, v) {
    end <- pos + nchar(word) - 1L
    if (end > n || paste(chars[pos:end], collapse = "") != word) fail("bad literal")
    pos <<- end + 1L
    v
  }
  number <- function() {
    start <- pos
    while (pos <= n && chars[pos] %in% c("-", "+", ".", "e", "E", as.character(0:9)))
      pos <<- pos + 1L
    if (pos == start) fail("unexpected character")
    as.numeric(paste(chars[start:(pos - 1L)], collapse = ""))
  }
  string <- function() {
    pos <<- pos + 1L
    out <- character()
    repeat {
      if (pos > n) fail("unterminated string")
      ch <- chars[pos]
      if (ch == "\"") break
      if (ch == "\\") {
        pos <<- pos + 1L
        e <- chars[pos]
        ch <- switch(e, "\"" = "\"", "\\" = "\\", "/" = "/", b = "\b", f = "\f", n = "\n",
                     r = "\r", t = "\t",
                     u = {
                       code <- strtoi(paste(chars[(pos + 1L):(pos + 4L)], collapse = ""), 16L)
                       pos <<- pos + 4L
                       intToUtf8(code)
                     },
                     fail("bad escape"))
      }
      out <- c(out, ch)
      pos <<- pos + 1L
    }
    pos <<- pos + 1L
    paste(out, collapse = "")
  }
  array <- function() {
    pos <<- pos + 1L
    out <- list()
    skip()
    if (chars[pos] == "]") {
      pos <<- pos + 1L
      return(out)
    }
    repeat {
      out[[length(out) + 1L]] <- value()
      skip()
      if (chars[pos] == "]") break
      if (chars[pos] != ",") fail("expected , or ]")
      pos <<- pos + 1L
    }
    pos <<- pos + 1L
    out
  }
  object <- function() {
    pos <<- pos + 1L
    out <- list()
    skip()
    if (chars[pos] == "}") {
      pos <<- pos + 1L
      return(out)
    }
    repeat {
      skip()
      if (chars[pos] != "\"") fail("expected a key")
      key <- string()
      skip()
      if (chars[pos] != ":") fail("expected :")
      pos <<- pos + 1L
      v <- value()
      out[key] <- list(v)
      skip()
      if (chars[pos] == "}") break
      if (chars[pos] != ",") fail("expected , or }")
      pos <<- pos + 1L
    }
    pos <<- pos + 1L
    out
  }
  v <- value()
  skip()
  if (pos <= n) fail("trailing characters")
  v
}
