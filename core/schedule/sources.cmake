target_sources(polygrad_compiler PRIVATE schedule/activations.cpp schedule/kernel_builder.cpp
  schedule/kernel_reduce.cpp schedule/reduce_forms.cpp schedule/scatter.cpp schedule/scheduler.cpp
  schedule/symbolic_sizes.cpp)
