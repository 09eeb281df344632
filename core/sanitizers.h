// Whether this translation unit is built with AddressSanitizer or
// ThreadSanitizer, under either compiler: gcc defines __SANITIZE_ADDRESS__
// and __SANITIZE_THREAD__, clang 14 (the fuzz and asan configurations,
// .bazelrc) only answers __has_feature. Define RINGSIM_ASAN and
// RINGSIM_TSAN to 1 or 0.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define RINGSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RINGSIM_ASAN 1
#endif
#endif
#ifndef RINGSIM_ASAN
#define RINGSIM_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define RINGSIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RINGSIM_TSAN 1
#endif
#endif
#ifndef RINGSIM_TSAN
#define RINGSIM_TSAN 0
#endif
