#include "real/file_stats.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

namespace ringsim::real {
namespace {

// A read-only private mapping of a whole file, unmapped by the destructor.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (base_ != nullptr) ::munmap(base_, size_);
  }

  // "" or the problem, naming the call.
  std::string map(const std::string& path) {
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
    if (base == MAP_FAILED) return std::string("mmap: ") + std::strerror(map_error);
    base_ = base;
    return "";
  }

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(base_), size_}; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace

FileStats read_back(const std::vector<std::string>& paths) {
  FileStats out;
  core::LossMeter meter;
  auto note = [&](const std::string& path, const std::string& problem) {
    if (!problem.empty() && out.problem.empty()) out.problem = path + ": " + problem;
  };
  for (const std::string& path : paths) {
    MappedFile file;
    core::PerfDataView view;
    std::string problem = file.map(path);
    if (problem.empty()) problem = core::read_perf_data(file.bytes(), view);
    if (!problem.empty()) {
      note(path, problem);
      continue;
    }
    out.files++;
    out.file_bytes += view.file_bytes;
    out.data_bytes += view.data.size();
    note(path, meter.add(view));
  }
  out.loss = meter.finish();
  return out;
}

}  // namespace ringsim::real
