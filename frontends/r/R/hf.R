# GPT-2 checkpoints as the HuggingFace Hub stores them, through the core's model (the C API's
# pg_gpt2_* and pg_tokenizer_*): the same loader, forward pass and KV cache as the Python
# package's polygrad.hf.

#' HuggingFace GPT-2: load, run and generate
#'
#' `pg_load_hf()` loads a GPT-2 model folder as the Hub stores it: `config.json`, and
#' `model.safetensors` or the shards `model.safetensors.index.json` names (F32, F16 or BF16;
#' keys with or without the `transformer.` prefix; a tied `lm_head`). When the folder holds
#' `vocab.json` and `merges.txt`, the model gets GPT-2's byte-level BPE tokenizer too, so
#' `pg_generate()` takes and returns text. The model lives in the core, shared with the Python
#' package, and has room for `max_batch` sequences of `max_seq_len` tokens in its KV cache.
#'
#' Token ids are the vocabulary's own (0-based, as in the files), given as an integer vector
#' (one sequence) or a matrix with one sequence per row.
#'
#' `pg_hf_forward()` gives the logits of whole sequences, `(batch, tokens, vocab)`, without
#' touching the cache. `pg_generate()` runs the prompt once (prefill) and then one step per new
#' token over the KV cache: greedy at `top_k = 1` (or `temperature = 0`), otherwise sampled
#' from the `top_k` most likely ids with R's random numbers (`set.seed()` for a fixed result).
#' @param path a model folder.
#' @param max_batch,max_seq_len the cache's room (`max_seq_len = 0`: the config's
#'   `n_positions`).
#' @param device the device (`NULL`: the default device).
#' @param model a model from `pg_load_hf()`.
#' @param tokens token ids, or for `pg_generate()` a string when the model has a tokenizer.
#' @param max_new_tokens how many ids to add.
#' @param temperature,top_k the sampling.
#' @return `pg_load_hf()`: a `polygrad_gpt2` object (`$config`, `$tokenizer`).
#'   `pg_hf_forward()`: a tensor. `pg_generate()`: the prompt and its continuation, as ids
#'   (the shape of `tokens`, widened) or as text.
#' @name hf
NULL

#' @rdname hf
#' @export
pg_load_hf <- function(path, max_batch = 1, max_seq_len = 0, device = NULL) {
  path <- path.expand(path)
  handle <- .Call(C_pgr_gpt2_load, path, max_batch, max_seq_len, .device(device))
  vocab <- file.path(path, "vocab.json")
  merges <- file.path(path, "merges.txt")
  tokenizer <- if (file.exists(vocab) && file.exists(merges)) pg_tokenizer(vocab, merges)
  structure(list(handle = handle, config = .Call(C_pgr_gpt2_config, handle),
                 tokenizer = tokenizer, path = path), class = "polygrad_gpt2")
}

#' @export
print.polygrad_gpt2 <- function(x, ...) {
  c <- x$config
  cat(sprintf("GPT-2 from %s: %g layers, %g wide, %g heads, vocabulary %g; cache %g x %g%s\n",
              x$path, c[["n_layer"]], c[["n_embd"]], c[["n_head"]], c[["vocab_size"]],
              c[["max_batch"]], c[["max_seq_len"]],
              if (is.null(x$tokenizer)) "" else "; tokenizer"))
  invisible(x)
}

.token_matrix <- function(tokens) {
  m <- if (is.matrix(tokens)) tokens else matrix(tokens, nrow = 1)
  if (!is.numeric(m) || anyNA(m) || any(m != round(m)) || any(m < 0))
    .value_error("tokens must be whole, non-negative ids")
  m
}

#' @rdname hf
#' @export
pg_hf_forward <- function(model, tokens) {
  ids <- pg_tensor(.token_matrix(tokens), dtype = "int32")
  .Call(C_pgr_gpt2_forward, model$handle, ids, NULL)
}

#' @rdname hf
#' @export
pg_generate <- function(model, tokens, max_new_tokens, temperature = 1, top_k = 50) {
  as_text <- is.character(tokens)
  if (as_text) {
    if (is.null(model$tokenizer))
      .value_error("pg_generate: text needs a tokenizer (vocab.json and merges.txt in the ",
                   "model folder); pass token ids instead")
    tokens <- pg_encode(model$tokenizer, tokens)
  }
  prompt <- .token_matrix(tokens)
  if (ncol(prompt) == 0) .value_error("pg_generate: the prompt is empty")
  needed <- ncol(prompt) + max(max_new_tokens - 1, 0)
  if (needed > model$config[["max_seq_len"]])
    .value_error("pg_generate: ", ncol(prompt), " prompt tokens and ", max_new_tokens,
                 " new ones do not fit max_seq_len ", model$config[["max_seq_len"]])
  out <- prompt
  if (max_new_tokens > 0) {
    logits <- .Call(C_pgr_gpt2_prefill, model$handle, pg_tensor(prompt, dtype = "int32"))
    for (i in seq_len(max_new_tokens)) {
      nxt <- .pick(as.matrix(logits), temperature, top_k)
      out <- cbind(out, nxt, deparse.level = 0)
      if (i < max_new_tokens)
        logits <- .Call(C_pgr_gpt2_step, model$handle,
                        pg_tensor(matrix(nxt, ncol = 1), dtype = "int32"))
    }
  }
  if (as_text) return(pg_decode(model$tokenizer, out[1, ]))
  if (is.matrix(tokens)) out else out[1, ]
}

# The next id of each row of `logits` (batch x vocab): the largest at top_k 1 or temperature
# 0, else drawn from the top_k largest's softmax at `temperature`.
.pick <- function(logits, temperature, top_k) {
  if (top_k == 1 || temperature == 0) return(max.col(logits, ties.method = "first") - 1)
  apply(logits, 1, function(row) {
    keep <- order(row, decreasing = TRUE)[seq_len(min(top_k, length(row)))]
    z <- row[keep] / temperature
    p <- exp(z - max(z))
    keep[sample.int(length(keep), 1, prob = p / sum(p))] - 1
  })
}

#' GPT-2's byte-level BPE tokenizer
#'
#' Reads `vocab.json` and `merges.txt` (the core's tokenizer, the one the Python package uses).
#' `pg_encode()` turns UTF-8 text into ids, `pg_decode()` ids into text.
#' @param vocab,merges the two files.
#' @param tokenizer a tokenizer from `pg_tokenizer()`.
#' @param text a string.
#' @param ids token ids.
#' @return `pg_tokenizer()`: a `polygrad_tokenizer`; `pg_encode()`: a numeric vector of ids;
#'   `pg_decode()`: a string.
#' @name tokenizer
NULL

#' @rdname tokenizer
#' @export
pg_tokenizer <- function(vocab, merges) {
  structure(list(handle = .Call(C_pgr_tokenizer_load, path.expand(vocab), path.expand(merges))),
            class = "polygrad_tokenizer")
}

#' @rdname tokenizer
#' @export
pg_encode <- function(tokenizer, text) .Call(C_pgr_tokenizer_encode, tokenizer$handle, text)

#' @rdname tokenizer
#' @export
pg_decode <- function(tokenizer, ids) .Call(C_pgr_tokenizer_decode, tokenizer$handle, ids)
