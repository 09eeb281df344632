#include "real/synthesize.h"

#include <sys/stat.h>

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::real {
namespace {

// Bounds on what one scan reads (a runaway /proc would otherwise be
// unbounded): entries per directory, lines per file.
constexpr std::size_t kDirEntriesMax = 1 << 22;
constexpr std::size_t kLinesMax = 1 << 22;

bool parse_hex(std::string_view text, std::uint64_t& value) {
  if (text.empty()) return false;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

bool parse_dec(std::string_view text, std::uint64_t& value) {
  if (text.empty()) return false;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

// The next space-separated field of `line` from `at`.
std::string_view next_field(std::string_view line, std::size_t& at) {
  while (at < line.size() && line[at] == ' ') at++;
  const std::size_t begin = at;
  while (at < line.size() && line[at] != ' ') at++;
  return line.substr(begin, at - begin);
}

// The numeric entries of a /proc directory.
std::vector<pid_t> numeric_entries(const std::string& path) {
  std::vector<pid_t> out;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return out;
  for (std::size_t n = 0; n < kDirEntriesMax; n++) {
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    std::uint64_t value = 0;
    if (parse_dec(entry->d_name, value) && value > 0 && value < (std::uint64_t{1} << 31)) {
      out.push_back(static_cast<pid_t>(value));
    }
  }
  ::closedir(dir);
  return out;
}

bool read_first_line(const std::string& path, std::string& line) {
  std::ifstream in(path);
  if (!in) return false;
  return static_cast<bool>(std::getline(in, line));
}

}  // namespace

bool parse_maps_line(std::string_view line, MapEntry& out) {
  // "start-end perms offset major:minor inode   path"
  std::size_t at = 0;
  const std::string_view range = next_field(line, at);
  const std::string_view perms = next_field(line, at);
  const std::string_view offset = next_field(line, at);
  const std::string_view device = next_field(line, at);
  const std::string_view inode = next_field(line, at);
  const std::size_t dash = range.find('-');
  const std::size_t colon = device.find(':');
  if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() != 4) return false;
  MapEntry m;
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  if (!parse_hex(range.substr(0, dash), m.start) || !parse_hex(range.substr(dash + 1), m.end) ||
      !parse_hex(offset, m.pgoff) || !parse_hex(device.substr(0, colon), major) ||
      !parse_hex(device.substr(colon + 1), minor) || !parse_dec(inode, m.inode) || m.end <= m.start) {
    return false;
  }
  m.major = static_cast<std::uint32_t>(major);
  m.minor = static_cast<std::uint32_t>(minor);
  if (perms[0] == 'r') m.prot |= PROT_READ;
  if (perms[1] == 'w') m.prot |= PROT_WRITE;
  if (perms[2] == 'x') m.prot |= PROT_EXEC;
  m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
  while (at < line.size() && line[at] == ' ') at++;
  m.path = std::string(line.substr(at));
  out = std::move(m);
  return true;
}

RecordBuilder::RecordBuilder(std::uint64_t sample_type, bool sample_id_all) {
  if (!sample_id_all) return;
  // The sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
  for (const std::uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                                  PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER}) {
    if ((sample_type & bit) != 0) trailer_bytes_ += 8;
  }
  identifier_ = (sample_type & PERF_SAMPLE_IDENTIFIER) != 0;
}

void RecordBuilder::add_lost_samples(std::uint64_t lost, std::uint64_t id) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  append(&lost, sizeof lost);
  finish_record(start, PERF_RECORD_LOST_SAMPLES, 0);
  // Without IDENTIFIER (ours with --overwrite and one event) the record
  // names no event and perf takes the first, as in perf's own file
  // (__record__save_lost_samples: the trailer the attr's sample_type has).
  if (identifier_) std::memcpy(bytes_.data() + bytes_.size() - sizeof id, &id, sizeof id);
}

void RecordBuilder::append(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), bytes, bytes + size);
}

void RecordBuilder::append_string(std::string_view text) {
  append(text.data(), text.size());
  const std::size_t padded = (text.size() + 1 + 7) / 8 * 8;
  bytes_.insert(bytes_.end(), padded - text.size(), std::byte{0});
}

void RecordBuilder::finish_record(std::size_t start, std::uint32_t type, std::uint16_t misc) {
  bytes_.insert(bytes_.end(), trailer_bytes_, std::byte{0});
  const std::size_t size = bytes_.size() - start;
  VERIFY(size % core::kRecordAlignBytes == 0);
  VERIFY(size <= core::kRecordBytesMax);
  perf_event_header header{};
  header.type = type;
  header.misc = misc;
  header.size = static_cast<std::uint16_t>(size);
  std::memcpy(bytes_.data() + start, &header, sizeof header);
  records_++;
}

void RecordBuilder::add_comm(std::uint32_t pid, std::uint32_t tid, std::string_view comm) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  append(&pid, sizeof pid);
  append(&tid, sizeof tid);
  append_string(comm.substr(0, 15));  // TASK_COMM_LEN - 1
  finish_record(start, PERF_RECORD_COMM, 0);
}

void RecordBuilder::add_namespaces(std::uint32_t pid, std::uint32_t tid, std::span<const NamespaceLink> links) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  append(&pid, sizeof pid);
  append(&tid, sizeof tid);
  const std::uint64_t count = links.size();
  append(&count, sizeof count);
  for (const NamespaceLink& link : links) {
    append(&link.dev, sizeof link.dev);
    append(&link.ino, sizeof link.ino);
  }
  finish_record(start, PERF_RECORD_NAMESPACES, 0);
}

void RecordBuilder::add_cgroup(std::uint64_t id, std::string_view path) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  append(&id, sizeof id);
  append_string(path);
  finish_record(start, PERF_RECORD_CGROUP, 0);
}

namespace {

// The kernel's id of the cgroup at `path`: its file handle's 8 bytes (as
// perf reads it). false if it is gone.
bool cgroup_id(const std::string& path, std::uint64_t& id) {
  struct {
    file_handle fh;
    std::uint64_t id;
  } handle{};
  handle.fh.handle_bytes = sizeof handle.id;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, path.c_str(), &handle.fh, &mount_id, 0) != 0) return false;
  id = handle.id;
  return true;
}

}  // namespace

std::uint64_t synthesize_cgroups(const std::string& mount, RecordBuilder& builder) {
  // Depth first, as perf's perf_event__walk_cgroup_tree: a directory, then
  // each child's tree in readdir order; an explicit stack, bounded.
  std::vector<std::string> pending = {""};
  std::uint64_t written = 0;
  while (!pending.empty() && written < kCgroupsMax) {
    const std::string relative = std::move(pending.back());
    pending.pop_back();
    const std::string path = mount + relative;
    std::uint64_t id = 0;
    if (!cgroup_id(path, id)) continue;  // removed meanwhile
    builder.add_cgroup(id, relative.empty() ? "/" : relative);
    written++;
    std::vector<std::string> children;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) continue;
    for (std::uint64_t n = 0; n < kCgroupsMax; n++) {
      const dirent* entry = ::readdir(dir);
      if (entry == nullptr) break;
      const std::string name = entry->d_name;
      if (entry->d_type != DT_DIR || name == "." || name == "..") continue;
      if (path.size() + name.size() + 1 >= PATH_MAX) continue;  // as perf
      children.push_back(relative + "/" + name);
    }
    ::closedir(dir);
    // The stack takes them last first, so they are written in readdir order.
    pending.insert(pending.end(), children.rbegin(), children.rend());
  }
  return written;
}

bool namespace_links(pid_t tid, NamespaceLink (&out)[kNamespaces]) {
  static constexpr const char* kNames[kNamespaces] = {"net", "uts", "ipc", "pid", "user", "mnt", "cgroup"};
  const std::string dir = "/proc/" + std::to_string(tid) + "/ns/";
  struct stat task{};
  if (::stat(("/proc/" + std::to_string(tid)).c_str(), &task) != 0) return false;
  for (std::size_t i = 0; i < kNamespaces; i++) {
    struct stat st{};
    out[i] = NamespaceLink{};
    if (::stat((dir + kNames[i]).c_str(), &st) == 0) out[i] = NamespaceLink{st.st_dev, st.st_ino};
  }
  return true;
}

void RecordBuilder::add_kernel_mmap(std::uint64_t start_address, std::uint64_t length, std::uint64_t pgoff,
                                    std::string_view name) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  const std::uint32_t pid = 0xffffffffu;  // -1: the kernel
  const std::uint32_t tid = 0;
  append(&pid, sizeof pid);
  append(&tid, sizeof tid);
  append(&start_address, sizeof start_address);
  append(&length, sizeof length);
  append(&pgoff, sizeof pgoff);
  append_string(name);
  finish_record(start, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
}

void RecordBuilder::add_mmap2(std::uint32_t pid, std::uint32_t tid, const MapEntry& map, std::uint16_t extra_misc) {
  const std::size_t start = bytes_.size();
  bytes_.resize(start + sizeof(perf_event_header));
  const std::uint64_t length = map.end - map.start;
  const std::uint64_t ino_generation = 0;
  append(&pid, sizeof pid);
  append(&tid, sizeof tid);
  append(&map.start, sizeof map.start);
  append(&length, sizeof length);
  append(&map.pgoff, sizeof map.pgoff);
  append(&map.major, sizeof map.major);
  append(&map.minor, sizeof map.minor);
  append(&map.inode, sizeof map.inode);
  append(&ino_generation, sizeof ino_generation);
  append(&map.prot, sizeof map.prot);
  append(&map.flags, sizeof map.flags);
  // PATH_MAX bounds what /proc prints; the record's u16 size bounds it too.
  append_string(map.path.empty() ? std::string_view("//anon") : std::string_view(map.path).substr(0, 4095));
  const std::uint16_t misc = (map.prot & PROT_EXEC) != 0 ? PERF_RECORD_MISC_USER
                                                          : (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA);
  finish_record(start, PERF_RECORD_MMAP2, static_cast<std::uint16_t>(misc | extra_misc));
}

void RecordBuilder::add_id_index(std::span<const IdIndexEntry> entries) {
  for (std::size_t first = 0; first < entries.size(); first += kIdIndexEntriesMax) {
    const std::size_t count = std::min(kIdIndexEntriesMax, entries.size() - first);
    perf_event_header header{};
    header.type = kRecordIdIndex;
    header.size = static_cast<std::uint16_t>(sizeof header + 8 + count * sizeof(IdIndexEntry));
    const std::uint64_t nr = count;
    append(&header, sizeof header);
    append(&nr, sizeof nr);
    append(entries.data() + first, count * sizeof(IdIndexEntry));
    records_++;
  }
}

void RecordBuilder::add_records(std::span<const std::byte> records) {
  core::RecordCounts counts;
  const core::WalkResult walk = core::walk_records(records, counts);
  VERIFY_MSG(walk.error == core::RecordError::none, "add_records: the records do not walk");
  bytes_.insert(bytes_.end(), records.begin(), records.end());
  records_ += counts.records;
}

core::RecordCounts RecordBuilder::counts() const {
  core::RecordCounts counts;
  const core::WalkResult walk = core::walk_records(bytes_, counts);
  VERIFY_MSG(walk.error == core::RecordError::none, "a synthesized record does not walk");
  return counts;
}

void RecordBuilder::clear() {
  bytes_.clear();
  records_ = 0;
}

std::string synthesize_kernel_mmap(RecordBuilder& builder) {
  std::ifstream in("/proc/kallsyms");
  if (!in) return "cannot read /proc/kallsyms: kernel samples will not be resolved";
  std::uint64_t text = 0;
  std::uint64_t etext = 0;
  std::string line;
  for (std::size_t n = 0; n < kLinesMax && (text == 0 || etext == 0) && std::getline(in, line); n++) {
    // "ffffffff81000000 T _text"
    std::size_t at = 0;
    const std::string_view view(line);
    const std::string_view address = next_field(view, at);
    next_field(view, at);
    const std::string_view name = next_field(view, at);
    std::uint64_t value = 0;
    if (name == "_text" && parse_hex(address, value)) text = value;
    if (name == "_etext" && parse_hex(address, value)) etext = value;
  }
  if (text == 0 || etext <= text) {
    return "/proc/kallsyms hides kernel addresses (kernel.kptr_restrict, or not root): kernel samples will not be "
           "resolved";
  }
  builder.add_kernel_mmap(text, etext - text, text, "[kernel.kallsyms]_text");
  return "";
}

bool synthesize_held_command(pid_t pid, RecordBuilder& builder, bool namespaces) {
  std::string comm;
  if (!read_first_line("/proc/" + std::to_string(pid) + "/comm", comm)) return false;
  const auto id = static_cast<std::uint32_t>(pid);
  NamespaceLink links[kNamespaces];
  const bool with_links = namespaces && namespace_links(pid, links);
  builder.add_comm(id, id, comm);
  if (with_links) builder.add_namespaces(id, id, links);
  return true;
}

namespace {

// The MMAP2 records of process `pid`'s mappings of `how.kinds`, read from
// its maps within `how.map_timeout_ns` (see ProcessSynthesis); the number
// written.
std::uint64_t synthesize_maps(pid_t pid, const ProcessSynthesis& how, RecordBuilder& builder, SynthesisStats& stats) {
  if (how.kinds == MapKinds::none) return 0;  // --synth=task: COMM only
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const auto start = std::chrono::steady_clock::now();
  std::string line;
  std::uint64_t count = 0;
  for (std::size_t n = 0; n < kLinesMax && maps && std::getline(maps, line); n++) {
    MapEntry map;
    if (!parse_maps_line(line, map)) continue;
    const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    if (static_cast<std::uint64_t>(took.count()) > how.map_timeout_ns) {
      builder.add_mmap2(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(pid), map,
                        PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT);
      if (stats.maps_cut++ == 0) stats.first_cut = pid;
      return count + 1;
    }
    // perf: executable mappings; with mmap_data also the readable ones.
    if ((map.prot & PROT_EXEC) == 0 && (how.kinds == MapKinds::executable || (map.prot & PROT_READ) == 0)) continue;
    builder.add_mmap2(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(pid), map);
    count++;
  }
  return count;
}

}  // namespace

bool synthesize_process(pid_t pid, const ProcessSynthesis& how, RecordBuilder& builder, SynthesisStats& stats) {
  const std::string dir = "/proc/" + std::to_string(pid);
  const std::size_t rollback = builder.bytes().size();
  const std::vector<pid_t> threads = numeric_entries(dir + "/task");
  std::uint64_t thread_count = 0;
  for (const pid_t tid : threads) {
    std::string comm;
    if (!read_first_line(dir + "/task/" + std::to_string(tid) + "/comm", comm)) continue;  // exited
    builder.add_comm(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid), comm);
    NamespaceLink links[kNamespaces];
    if (how.namespaces && namespace_links(tid, links)) {
      builder.add_namespaces(static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid), links);
    }
    thread_count++;
  }
  if (thread_count == 0) {
    stats.skipped++;
    VERIFY(builder.bytes().size() == rollback);
    return false;
  }
  stats.maps += synthesize_maps(pid, how, builder, stats);
  stats.processes++;
  stats.threads += thread_count;
  return true;
}

void synthesize_all_processes(const ProcessSynthesis& how, RecordBuilder& builder, SynthesisStats& stats) {
  for (const pid_t pid : numeric_entries("/proc")) synthesize_process(pid, how, builder, stats);
}

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> threads = numeric_entries("/proc/" + std::to_string(pid) + "/task");
  std::sort(threads.begin(), threads.end());
  return threads;
}

pid_t thread_group_of(pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  for (std::size_t n = 0; n < kLinesMax && std::getline(in, line); n++) {
    if (line.rfind("Tgid:", 0) != 0) continue;
    std::size_t at = 5;
    std::uint64_t tgid = 0;
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) at++;
    if (parse_dec(std::string_view(line).substr(at), tgid) && tgid > 0 && tgid < (std::uint64_t{1} << 31)) {
      return static_cast<pid_t>(tgid);
    }
  }
  return -1;
}

std::vector<pid_t> processes_of_user(uid_t uid, pid_t except) {
  std::vector<pid_t> out;
  for (const pid_t pid : numeric_entries("/proc")) {
    struct stat st {};
    if (pid == except || ::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) continue;  // gone meanwhile
    if (st.st_uid != uid) continue;
    // A process that exited and is not reaped yet (state Z or X) keeps its
    // /proc entry but has no task to open an event on (ESRCH): leave it out,
    // or every walk of /proc finds it again.
    std::string stat;
    if (!read_first_line("/proc/" + std::to_string(pid) + "/stat", stat)) continue;  // gone meanwhile
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;
    const char state = stat[close + 2];
    if (state == 'Z' || state == 'X') continue;
    out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<pid_t> process_tree(pid_t root) {
  // ppid of every process: /proc/PID/stat is "pid (comm) state ppid ...",
  // comm may hold spaces and parentheses: read after the last ')'.
  std::map<pid_t, std::vector<pid_t>> children;
  for (const pid_t pid : numeric_entries("/proc")) {
    std::string stat;
    if (!read_first_line("/proc/" + std::to_string(pid) + "/stat", stat)) continue;
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::size_t at = close + 1;
    const std::string_view view(stat);
    next_field(view, at);  // state
    std::uint64_t ppid = 0;
    if (!parse_dec(next_field(view, at), ppid)) continue;
    children[static_cast<pid_t>(ppid)].push_back(pid);
  }
  std::vector<pid_t> tree{root};
  std::set<pid_t> seen{root};
  // Breadth first; each pid is visited once.
  for (std::size_t i = 0; i < tree.size() && i < kDirEntriesMax; i++) {
    const auto it = children.find(tree[i]);
    if (it == children.end()) continue;
    for (const pid_t child : it->second) {
      if (seen.insert(child).second) tree.push_back(child);
    }
  }
  return tree;
}

}  // namespace ringsim::real
