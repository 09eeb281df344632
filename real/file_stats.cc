#include "real/file_stats.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <utility>

#include "core/verify.h"

namespace ringsim::real {

std::string read_perf_data_mapped(const std::string& path, model::PerfDataFile& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path + ": cannot open: " + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return path + ": fstat: " + std::strerror(error);
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return path + ": empty file";
  }
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (base == MAP_FAILED) return path + ": mmap: " + std::strerror(map_error);
  const std::string problem =
      model::parse_perf_data(std::span<const std::byte>(static_cast<const std::byte*>(base), size), out);
  ::munmap(base, size);
  return problem.empty() ? "" : path + ": " + problem;
}

FileStats read_back(const std::vector<std::string>& paths) {
  FileStats out;
  model::PerfDataFile merged;
  for (const std::string& path : paths) {
    model::PerfDataFile file;
    if (const std::string problem = read_perf_data_mapped(path, file); !problem.empty()) {
      if (out.problem.empty()) out.problem = problem;
      continue;
    }
    out.files++;
    out.file_bytes += file.file_size;
    out.data_bytes += file.data_size;
    if (merged.attrs.empty()) {
      merged = std::move(file);
    } else {
      merged.data.insert(merged.data.end(), file.data.begin(), file.data.end());
    }
  }
  merged.data_size = merged.data.size();
  if (const std::string problem = model::loss_stats(merged, out.loss); !problem.empty() && out.problem.empty()) {
    out.problem = problem;
  }
  return out;
}

}  // namespace ringsim::real
