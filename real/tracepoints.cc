#include "real/tracepoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <set>
#include <utility>

#include "core/bytes.h"
#include "core/verify.h"

namespace ringsim::real {
namespace {

// The most bytes one tracefs file may hold (a format is a few KiB,
// printk_formats tens of KiB): a bound on the reading loop.
constexpr std::size_t kTracefsFileMaxBytes = std::size_t{64} << 20;
// The most directory entries read from one tracefs directory.
constexpr std::size_t kDirEntriesMax = 1 << 20;
// The most tracepoints one -e may expand to (perf's whole syscalls
// system is about 700).
constexpr std::size_t kExpandMax = 4096;

bool is_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A whole tracefs file (its size cannot be stat'ed). "" or the problem.
std::string read_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path + ": " + std::strerror(errno);
  out.clear();
  char buf[8192];
  std::string problem;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      problem = path + ": " + std::strerror(errno);
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > kTracefsFileMaxBytes) {
      problem = path + ": larger than " + std::to_string(kTracefsFileMaxBytes) + " bytes";
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return problem;
}

// The subdirectories of `dir` in directory order (readdir's, as perf).
std::string subdirectories(const std::string& dir, std::vector<std::string>& out) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return dir + ": " + std::strerror(errno);
  out.clear();
  for (std::size_t i = 0; i < kDirEntriesMax; i++) {
    const dirent* e = ::readdir(d.get());
    if (e == nullptr) return "";
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (is_dir(dir + "/" + name)) out.push_back(name);
  }
  return dir + ": more than " + std::to_string(kDirEntriesMax) + " entries";
}

std::string read_id(const std::string& dir, std::uint64_t& id) {
  std::string text;
  if (std::string problem = read_file(dir + "/id", text); !problem.empty()) return problem;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return dir + "/id: not a number: \"" + text + "\"";
  return "";
}

bool matches(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// The events of one system matching `name_glob`, in directory order.
std::string system_events(const std::string& root, const std::string& system, const std::string& name_glob,
                          const std::string& modifiers, std::vector<Tracepoint>& out) {
  const std::string dir = root + "/events/" + system;
  std::vector<std::string> names;
  if (std::string problem = subdirectories(dir, names); !problem.empty()) return problem;
  for (const std::string& name : names) {
    if (!matches(name_glob, name)) continue;
    Tracepoint t{system, name, modifiers, 0};
    // A directory with no id (none in practice) is not an event perf can open.
    if (::access((dir + "/" + name + "/id").c_str(), R_OK) != 0) continue;
    if (std::string problem = read_id(dir + "/" + name, t.id); !problem.empty()) return problem;
    if (out.size() >= kExpandMax) return "more than " + std::to_string(kExpandMax) + " tracepoints";
    out.push_back(std::move(t));
  }
  return "";
}

// A file's bytes after its size (u32 or u64, as the caller says).
template <typename Size>
std::string put_file(std::vector<std::byte>& out, const std::string& path) {
  std::string text;
  if (std::string problem = read_file(path, text); !problem.empty()) return problem;
  core::append_int<Size>(out, static_cast<Size>(text.size()));
  core::append_bytes(out, text.data(), text.size());
  return "";
}

// The systems section: each system with a tracepoint asked for, in
// directory order, each with its formats in directory order.
std::string put_systems(std::vector<std::byte>& out, const std::string& root, const std::vector<Tracepoint>& tps) {
  std::vector<std::string> systems;
  if (std::string problem = subdirectories(root + "/events", systems); !problem.empty()) return problem;
  std::set<std::pair<std::string, std::string>> wanted;
  std::set<std::string> wanted_systems;
  for (const Tracepoint& t : tps) {
    wanted.emplace(t.system, t.name);
    wanted_systems.insert(t.system);
  }
  std::erase_if(systems, [&](const std::string& s) { return s == "ftrace" || wanted_systems.count(s) == 0; });
  core::append_int<std::uint32_t>(out, static_cast<std::uint32_t>(systems.size()));
  for (const std::string& system : systems) {
    std::vector<std::string> names;
    if (std::string problem = subdirectories(root + "/events/" + system, names); !problem.empty()) return problem;
    std::erase_if(names, [&](const std::string& n) { return wanted.count({system, n}) == 0; });
    core::append_cstring(out, system);
    core::append_int<std::uint32_t>(out, static_cast<std::uint32_t>(names.size()));
    for (const std::string& name : names) {
      if (std::string problem = put_file<std::uint64_t>(out, root + "/events/" + system + "/" + name + "/format");
          !problem.empty()) {
        return problem;
      }
    }
  }
  return "";
}

}  // namespace

std::string tracefs_root() {
  for (const char* root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (is_dir(std::string(root) + "/events")) return root;
  }
  return "";
}

std::string find_tracepoints(const std::string& root, std::string_view text, std::vector<Tracepoint>& out) {
  const std::string spec(text);
  const std::size_t colon = spec.find(':');
  VERIFY(colon != std::string::npos);
  const std::size_t second = spec.find(':', colon + 1);
  const std::string system = spec.substr(0, colon);
  const std::string name = spec.substr(colon + 1, second == std::string::npos ? std::string::npos : second - colon - 1);
  const std::string modifiers = second == std::string::npos ? "" : spec.substr(second + 1);
  if (system.empty() || name.empty()) return "-e " + spec + ": a tracepoint is SYSTEM:NAME";
  if (root.empty()) {
    return "-e " + spec +
           ": tracefs is not mounted (no /sys/kernel/tracing/events): mount -t tracefs nodev /sys/kernel/tracing";
  }
  std::vector<std::string> systems;
  if (is_glob(system)) {
    if (std::string problem = subdirectories(root + "/events", systems); !problem.empty()) return "-e " + spec + ": " + problem;
    std::erase_if(systems, [&](const std::string& s) { return !matches(system, s); });
  } else if (is_dir(root + "/events/" + system)) {
    systems.push_back(system);
  } else {
    return "-e " + spec + ": unknown event: not an event name nor a tracepoint system in " + root +
           "/events (see perf list tracepoint)";
  }
  std::vector<Tracepoint> found;
  for (const std::string& s : systems) {
    if (std::string problem = system_events(root, s, name, modifiers, found); !problem.empty()) {
      return "-e " + spec + ": " + problem;
    }
  }
  if (found.empty()) {
    return "-e " + spec + ": no tracepoint " + (is_glob(spec) ? "matches it" : "of that name") + " in " + root +
           "/events (see perf list tracepoint)";
  }
  out.insert(out.end(), found.begin(), found.end());
  return "";
}

std::string tracing_data(const std::string& root, const std::vector<Tracepoint>& tracepoints,
                         std::vector<std::byte>& out) {
  VERIFY(!root.empty());
  std::vector<std::byte> b;
  const char magic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  core::append_bytes(b, magic, sizeof magic);
  core::append_cstring(b, "0.6");
  core::append_int<std::uint8_t>(b, std::endian::native == std::endian::big ? 1 : 0);
  core::append_int<std::uint8_t>(b, static_cast<std::uint8_t>(sizeof(long)));
  core::append_int<std::uint32_t>(b, static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE)));
  for (const char* header : {"header_page", "header_event"}) {
    core::append_cstring(b, header);
    if (std::string problem = put_file<std::uint64_t>(b, root + "/events/" + header); !problem.empty()) return problem;
  }
  core::append_int<std::uint32_t>(b, 0);  // ftrace events: none asked for
  if (std::string problem = put_systems(b, root, tracepoints); !problem.empty()) return problem;
  core::append_int<std::uint32_t>(b, 0);  // kallsyms: none, as perf 6.1
  if (std::string problem = put_file<std::uint32_t>(b, root + "/printk_formats"); !problem.empty()) return problem;
  if (std::string problem = put_file<std::uint64_t>(b, root + "/saved_cmdlines"); !problem.empty()) return problem;
  out = std::move(b);
  return "";
}

}  // namespace ringsim::real
