target_sources(polygrad_compiler PRIVATE runtime/buffers.cpp runtime/capture.cpp runtime/memory_plan.cpp runtime/realize.cpp runtime/schedule_cache.cpp runtime/size_templates.cpp)
