// The bytes the simulated AUX PMU writes: a function of (seed, cpu, AUX
// position) alone, so the oracle knows what every delivered AUX byte must
// be without keeping a copy, and a byte delivered at the wrong position, or
// twice, or torn, shows.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringsim::model {

// The 8 bytes at positions [8 * word, 8 * word + 8), little-endian.
inline std::uint64_t aux_word(std::uint64_t seed, std::uint32_t cpu, std::uint64_t word) {
  std::uint64_t x = seed ^ (std::uint64_t{cpu} << 56) ^ word;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline std::byte aux_byte(std::uint64_t seed, std::uint32_t cpu, std::uint64_t position) {
  return static_cast<std::byte>(aux_word(seed, cpu, position >> 3) >> (8 * (position & 7)));
}

}  // namespace ringsim::model
