target_sources(polygrad_compiler PRIVATE runtime/buffers.cpp runtime/realize.cpp runtime/schedule_cache.cpp)
