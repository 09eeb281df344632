// Reading a fuzz input as a stream of small values: past the end every
// value is 0, so any input, even empty, is a complete program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace ringsim::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return at_ >= size_; }
  std::size_t left() const { return empty() ? 0 : size_ - at_; }

  std::uint8_t byte() { return empty() ? 0 : data_[at_++]; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(byte() | byte() << 8); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= static_cast<std::uint64_t>(byte()) << (8 * i);
    return v;
  }
  // The next n bytes (fewer at the end).
  std::span<const std::byte> bytes(std::size_t n) {
    const std::size_t taken = n < left() ? n : left();
    const std::span<const std::byte> out(reinterpret_cast<const std::byte*>(data_) + at_, taken);
    at_ += taken;
    return out;
  }
  // Up to the next separator byte (or the end), as text.
  std::string until(char separator) {
    std::string out;
    while (!empty()) {
      const char c = static_cast<char>(byte());
      if (c == separator) break;
      out.push_back(c);
    }
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace ringsim::fuzz
