#include "real/clock.h"

#include <ctime>

#include "core/verify.h"

namespace ringsim::real {

std::uint64_t monotonic_ns() {
  timespec now{};
  const int rc = ::clock_gettime(CLOCK_MONOTONIC, &now);
  VERIFY(rc == 0);
  VERIFY(now.tv_sec >= 0);
  return static_cast<std::uint64_t>(now.tv_sec) * kNsPerSecond + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace ringsim::real
