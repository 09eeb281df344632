// CLOCK_MONOTONIC in nanoseconds: deadlines and intervals of the real side
// (never a test's verdict).
#pragma once

#include <cstdint>

namespace ringsim::real {

inline constexpr std::uint64_t kNsPerMs = 1'000'000;
inline constexpr std::uint64_t kNsPerSecond = 1'000'000'000;

std::uint64_t monotonic_ns();

}  // namespace ringsim::real
