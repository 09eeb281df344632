// The bytes the simulated AUX PMU writes: a function of (seed, cpu, AUX
// position) alone, so the oracle knows what every delivered AUX byte must
// be without keeping a copy, and a byte delivered at the wrong position, or
// twice, or torn, shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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

// The bytes at positions [position, position + n) into out: whole words
// at a time between a partial first and last word.
inline void aux_fill(std::uint64_t seed, std::uint32_t cpu, std::uint64_t position, std::byte* out, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && ((position + i) & 7) != 0; i++) out[i] = aux_byte(seed, cpu, position + i);
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t word = aux_word(seed, cpu, (position + i) >> 3);
    std::memcpy(out + i, &word, 8);
  }
  for (; i < n; i++) out[i] = aux_byte(seed, cpu, position + i);
}

// The index of the first of data's n bytes that differs from the bytes at
// [position, position + n), or n when none does.
inline std::size_t aux_mismatch(std::uint64_t seed, std::uint32_t cpu, std::uint64_t position, const std::byte* data,
                                std::size_t n) {
  std::size_t i = 0;
  for (; i < n && ((position + i) & 7) != 0; i++) {
    if (data[i] != aux_byte(seed, cpu, position + i)) return i;
  }
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t word = aux_word(seed, cpu, (position + i) >> 3);
    if (std::memcmp(data + i, &word, 8) != 0) break;  // the byte is found below
  }
  for (; i < n; i++) {
    if (data[i] != aux_byte(seed, cpu, position + i)) return i;
  }
  return n;
}

}  // namespace ringsim::model
