// Appending raw bytes and integers (this machine's order) to a byte
// vector: the building blocks of perf's binary formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::core {

inline void append_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

template <typename T>
void append_int(std::vector<std::byte>& out, T value) {
  append_bytes(out, &value, sizeof value);
}

// The string and its NUL.
inline void append_cstring(std::vector<std::byte>& out, const std::string& s) {
  append_bytes(out, s.c_str(), s.size() + 1);
}

}  // namespace ringsim::core
