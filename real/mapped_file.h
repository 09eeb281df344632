// A read-only private mapping of a whole file, unmapped by the destructor:
// how the recorder reads its own files back (the summary's read-back, the
// feature sections' scan).
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace ringsim::real {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // "" or the problem, naming the call ("cannot open: ...", "empty file").
  std::string map(const std::string& path);
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(base_), size_}; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ringsim::real
