// Symbol visibility for libpolygrad. The library is built with -fvisibility=hidden; everything
// that belongs to the public API carries POLYGRAD_API.
#ifndef POLYGRAD_EXPORT_HPP
#define POLYGRAD_EXPORT_HPP

#if defined(_WIN32)
#if defined(POLYGRAD_BUILDING_LIBRARY)
#define POLYGRAD_API __declspec(dllexport)
#else
#define POLYGRAD_API __declspec(dllimport)
#endif
#else
#define POLYGRAD_API __attribute__((visibility("default")))
#endif

#endif  // POLYGRAD_EXPORT_HPP
