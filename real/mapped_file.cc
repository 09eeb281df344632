#include "real/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ringsim::real {

MappedFile::~MappedFile() {
  if (base_ != nullptr) ::munmap(base_, size_);
}

std::string MappedFile::map(const std::string& path) {
  if (base_ != nullptr) return "already mapped";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return std::string("fstat: ") + std::strerror(error);
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) {
    ::close(fd);
    return "empty file";
  }
  void* base = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    size_ = 0;
    return std::string("mmap: ") + std::strerror(map_error);
  }
  base_ = base;
  return "";
}

}  // namespace ringsim::real
