# A small MLP on R's own iris data set (150 flowers, 4 measurements, 3 species), trained with
# the polygrad R package: a held-out split of 30 flowers, full-batch Adam, a progress bar.
# Prints the held-out accuracy and exits with status 1 below 95% (docs/r.md gives the spread
# over other splits).
#   frontends/r/run_example.sh    (installs the package into build/release/Rlib first)
suppressPackageStartupMessages(library(polygrad))

set.seed(2)  # the held-out split
pg_manual_seed(2)  # the initial weights

x <- scale(as.matrix(iris[, 1:4]))
y <- as.integer(iris$Species)  # classes 1, 2, 3
test <- unlist(lapply(split(seq_len(nrow(x)), y), function(rows) sample(rows, 10)))
train <- setdiff(seq_len(nrow(x)), test)

mlp <- nn_module("iris_mlp",
  initialize = function(n_in, n_hidden, n_out) {
    self$fc1 <- nn_linear(n_in, n_hidden)
    self$fc2 <- nn_linear(n_hidden, n_out)
  },
  forward = function(x) self$fc2(self$fc1(x)$relu())
)
model <- mlp(4, 16, 3)
opt <- optim_adam(model$parameters, lr = 0.02)

x_train <- pg_tensor(x[train, ])
y_train <- pg_tensor(y[train], dtype = "int32")
epochs <- 300
bar <- progress::progress_bar$new(format = "training [:bar] :percent loss :loss",
                                  total = epochs, clear = FALSE, width = 70)
for (epoch in seq_len(epochs)) {
  opt$zero_grad()
  loss <- nnf_cross_entropy(model(x_train), y_train)
  loss$backward()
  opt$step()
  if (epoch %% 10 == 0) bar$tick(10, tokens = list(loss = sprintf("%.4f", loss$item())))
}

model$eval()
predicted <- with_no_grad(as.integer(model(pg_tensor(x[test, ]))$argmax(dim = 2)))
accuracy <- mean(predicted == y[test])
cat(sprintf("held-out accuracy: %.1f%% (%d of %d flowers)\n", 100 * accuracy,
            sum(predicted == y[test]), length(test)))
print(table(species = levels(iris$Species)[y[test]],
            predicted = factor(levels(iris$Species)[predicted], levels(iris$Species))))
if (accuracy < 0.95) quit(status = 1)
