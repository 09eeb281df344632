// The bytes the simulated AUX PMU writes: a function of (seed, cpu, AUX
// position) alone, so the oracle knows what every delivered AUX byte must
// be without keeping a copy, and a byte delivered at the wrong position, or
// twice, or torn, shows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringsim::model {

inline std::byte aux_byte(std::uint64_t seed, std::uint32_t cpu, std::uint64_t position) {
  std::uint64_t x = seed ^ (std::uint64_t{cpu} << 56) ^ (position >> 3);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<std::byte>(x >> (8 * (position & 7)));
}

}  // namespace ringsim::model
