target_sources(polygrad_compiler PRIVATE schedule/kernel_builder.cpp schedule/scheduler.cpp)
