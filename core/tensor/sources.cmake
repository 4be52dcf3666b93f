# The Tensor API (core/include/polygrad/tensor.hpp), compiled into polygrad_compiler (linked
# whole into libpolygrad, which exports its POLYGRAD_API symbols).
target_sources(polygrad_compiler PRIVATE
  tensor/lazy.cpp
  tensor/symbolic.cpp
  tensor/symbolic_api.cpp
  tensor/support.cpp
  tensor/tensor.cpp
  tensor/construction.cpp
  tensor/elementwise.cpp
  tensor/math.cpp
  tensor/special.cpp
  tensor/masks.cpp
  tensor/activations.cpp
  tensor/reduce.cpp
  tensor/movement.cpp
  tensor/autograd.cpp
  tensor/indexing.cpp
  tensor/nn_ops.cpp
  tensor/conv.cpp
  tensor/einsum.cpp
  tensor/capture.cpp
  tensor/collectives.cpp
  tensor/device_collectives.cpp)
