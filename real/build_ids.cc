#include "real/build_ids.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/mmap2.h"
#include "core/perf_abi.h"
#include "core/records.h"

namespace ringsim::real {
namespace {

namespace fs = std::filesystem;

struct Map {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::size_t dso = 0;  // index in HitScan::dsos
};

// The state of the walk: every mapping seen, per process.
class HitScan {
 public:
  // asked_build_ids: every event that writes MMAP2 set attr.build_id, so
  // the misc bit is the kernel's word for this record (core/mmap2.h).
  HitScan(HitDsos& out, bool asked_build_ids, bool all) : out_(out), asked_build_ids_(asked_build_ids), all_(all) {}

  void mmap(const perf_event_header& h, std::span<const std::byte> r) {
    const bool two = h.type == PERF_RECORD_MMAP2;
    // {pid, tid, addr, len, pgoff}, then MMAP2's 24 bytes of device/inode
    // or build-id and prot/flags, then the name.
    const std::uint64_t name_at = two ? 8 + 32 + 24 + 8 : 8 + 32;
    if (h.size <= name_at) return;
    const std::int32_t pid = core::load<std::int32_t>(r.data() + 8);
    const std::uint64_t addr = core::load<std::uint64_t>(r.data() + 16);
    const std::uint64_t len = core::load<std::uint64_t>(r.data() + 24);
    const char* name = reinterpret_cast<const char*>(r.data() + name_at);
    const std::string path(name, strnlen(name, h.size - name_at));
    BuildId id;
    if (two) {
      core::Mmap2Identity identity;
      const std::string problem = core::decode_mmap2(r.first(h.size), asked_build_ids_, identity);
      if (!problem.empty()) {
        out_.bad_mmap2++;
        return;  // no mapping, and no build-id, from a corrupt record
      }
      if (identity.has_build_id && identity.build_id_size > 0) {
        id.assign(identity.build_id.begin(), identity.build_id.begin() + identity.build_id_size);
      }
      if (identity.misc_says_build_id && !identity.has_build_id) out_.untrusted_build_id_misc++;
    }
    if (pid < 0) {  // the kernel's own mapping: kernel samples say so by their mode
      if (all_) out_.kernel = true;
      return;
    }
    const std::size_t index = dso(path, id, pid);
    maps_[pid].push_back(Map{addr, addr + len, index});
    if (all_) hit(index);
  }

  void fork(std::span<const std::byte> r) {
    const std::int32_t pid = core::load<std::int32_t>(r.data() + 8);
    const std::int32_t ppid = core::load<std::int32_t>(r.data() + 12);
    if (pid != ppid && maps_.count(pid) == 0 && maps_.count(ppid) != 0) maps_[pid] = maps_[ppid];
  }

  void exec(const perf_event_header& h, std::span<const std::byte> r) {
    if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0) maps_.erase(core::load<std::int32_t>(r.data() + 8));
  }

  void sample(const perf_event_header& h, std::span<const std::byte> r, std::uint64_t sample_type) {
    out_.samples++;
    const std::uint16_t mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (mode == PERF_RECORD_MISC_KERNEL) {
      out_.kernel = true;
      return;
    }
    std::uint64_t at = core::kRecordHeaderBytes + ((sample_type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0);
    if ((sample_type & PERF_SAMPLE_IP) == 0 || (sample_type & PERF_SAMPLE_TID) == 0 || at + 16 > h.size) return;
    const std::uint64_t ip = core::load<std::uint64_t>(r.data() + at);
    const std::int32_t pid = core::load<std::int32_t>(r.data() + at + 8);
    const auto it = maps_.find(pid);
    if (mode != PERF_RECORD_MISC_USER || it == maps_.end()) {
      out_.unresolved++;
      return;
    }
    for (auto m = it->second.rbegin(); m != it->second.rend(); ++m) {
      if (ip < m->start || ip >= m->end) continue;
      hit(m->dso);
      return;
    }
    out_.unresolved++;
  }

 private:
  std::size_t dso(const std::string& path, const BuildId& id, std::int32_t pid) {
    const auto it = index_.find(path);
    if (it != index_.end()) {
      if (!id.empty()) dsos_[it->second].id = id;
      return it->second;
    }
    dsos_.push_back(HitDso{path, id, dso_source(path, pid)});
    hit_.push_back(false);
    index_[path] = dsos_.size() - 1;
    return dsos_.size() - 1;
  }

  void hit(std::size_t dso) {
    if (hit_[dso]) return;
    hit_[dso] = true;
    out_.user.push_back(dsos_[dso]);
  }

  HitDsos& out_;
  const bool asked_build_ids_;
  const bool all_;
  std::map<std::int32_t, std::vector<Map>> maps_;
  std::vector<HitDso> dsos_;
  std::vector<bool> hit_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace

std::string dso_source(const std::string& path, std::int32_t pid) {
  if (path.empty() || path.front() != '/' || pid <= 0) return path;
  const std::string through_root = "/proc/" + std::to_string(pid) + "/root" + path;
  return ::access(through_root.c_str(), R_OK) == 0 ? through_root : path;
}

namespace {

// A file, by hard link or (across file systems) by copy; "" or the problem.
std::string link_or_copy(const std::string& from, const fs::path& to) {
  std::error_code error;
  fs::create_hard_link(from, to, error);
  if (!error) return "";
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  return error ? "copy " + from + " to " + to.string() + ": " + error.message() : "";
}

// /proc files report size 0: read them through.
std::string copy_stream(const std::string& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  if (!in || !out) return "copy " + from + " to " + to.string() + ": cannot open one of them";
  out << in.rdbuf();
  out.close();
  return out ? "" : "copy " + from + " to " + to.string() + ": write failed";
}

std::string write_bytes(const std::vector<std::byte>& bytes, const fs::path& to) {
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  return out ? "" : "write " + to.string() + " failed";
}

// "" if the ELF file at `source` has build-id `want`, else why not.
std::string verify_build_id(const std::string& name, const std::string& source, const BuildId& want) {
  BuildId have;
  if (const std::string p = elf_file_build_id(source, have); !p.empty()) return name + ": not cached: " + p;
  if (have == want) return "";
  return name + ": not cached: the file at " + source + " has build-id " + core::to_hex(have) +
         ", the recording saw " + core::to_hex(want) + " (changed since, or another file of that path)";
}

// One entry: DIR/<name>/<hex>/<file> made by `make`, and the .build-id link.
// `source`: where a user file is read.
std::string add_entry(const fs::path& dir, const core::BuildIdEntry& e, const std::string& source,
                      const std::vector<std::byte>& vdso) {
  const std::string hex = core::to_hex(e.id);
  if (hex.size() < 3) return e.name + ": build-id too short";
  const bool kernel = e.name == "[kernel.kallsyms]";
  const bool is_vdso = e.name == "[vdso]";
  const std::string relative = e.name.front() == '/' ? e.name.substr(1) : e.name;
  const fs::path entry = dir / relative / hex;
  const fs::path file = entry / (kernel ? "kallsyms" : is_vdso ? "vdso" : "elf");
  std::error_code error;
  fs::create_directories(entry, error);
  if (error) return "mkdir " + entry.string() + ": " + error.message();
  std::string problem;
  if (!fs::exists(file)) {
    if (!kernel && !is_vdso) {
      if (std::string p = verify_build_id(e.name, source, e.id); !p.empty()) return p;
    }
    problem = kernel ? copy_stream("/proc/kallsyms", file) : is_vdso ? write_bytes(vdso, file) : link_or_copy(source, file);
  }
  if (!problem.empty()) return problem;
  const fs::path link_dir = dir / ".build-id" / hex.substr(0, 2);
  const fs::path link = link_dir / hex.substr(2);
  fs::create_directories(link_dir, error);
  if (!error && !fs::is_symlink(link)) fs::create_symlink(fs::path("../..") / relative / hex, link, error);
  return error ? "link " + link.string() + ": " + error.message() : "";
}

}  // namespace

std::string find_hit_dsos(std::span<const std::byte> data, std::uint64_t data_offset,
                          const std::vector<core::EventDescription>& events, HitDsos& out, bool all) {
  const core::PerfDataView view = core::data_view(data, data_offset, events);
  // In time order, as perf's ordered events see them: a ring read before
  // another in the same round can put a sample in the file ahead of the
  // MMAP2 (from another CPU's ring) of the library it hit, e.g. the dynamic
  // loader's right after exec. Records without a time (synthesized ones)
  // count as time 0; equal times keep file order.
  struct Timed {
    std::uint64_t time_ns;
    std::span<const std::byte> record;
  };
  std::vector<Timed> timed;
  core::RecordCounts counts;
  const core::WalkResult walk =
      core::walk_records(view.data, counts, [&](const perf_event_header& h, std::span<const std::byte> r) {
        const bool wanted = h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2 ||
                            (h.type == PERF_RECORD_FORK && h.size >= 16) ||
                            (h.type == PERF_RECORD_COMM && h.size >= 16) || h.type == PERF_RECORD_SAMPLE;
        if (!wanted) return;
        std::uint64_t time_ns = 0;
        if (!view.time_of(h, r, time_ns)) time_ns = 0;
        timed.push_back(Timed{time_ns, r});
      });
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) { return a.time_ns < b.time_ns; });
  bool asked_build_ids = true;
  for (const core::EventDescription& e : events) {
    if (e.attr.mmap2 && !e.attr.build_id) asked_build_ids = false;
  }
  HitScan scan(out, asked_build_ids, all);
  for (const Timed& t : timed) {
    perf_event_header h{};
    std::memcpy(&h, t.record.data(), sizeof h);
    if (h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2) scan.mmap(h, t.record);
    if (h.type == PERF_RECORD_FORK) scan.fork(t.record);
    if (h.type == PERF_RECORD_COMM) scan.exec(h, t.record);
    if (h.type != PERF_RECORD_SAMPLE) continue;
    const core::PerfDataAttr* attr = view.attr_of(h, t.record);
    if (attr != nullptr) scan.sample(h, t.record, attr->attr.sample_type);
  }
  if (walk.error == core::RecordError::none) return "";
  return "data section: record at offset " + std::to_string(walk.valid_bytes) + ": " + core::to_string(walk.error);
}

std::vector<core::BuildIdEntry> build_id_entries(const HitDsos& hits, std::vector<std::string>& problems) {
  std::vector<core::BuildIdEntry> entries;
  BuildId id;
  if (hits.kernel) {
    if (const std::string p = kernel_build_id(id); p.empty()) {
      entries.push_back(core::BuildIdEntry{PERF_RECORD_MISC_KERNEL, -1, id, "[kernel.kallsyms]"});
    } else {
      problems.push_back(p);
    }
  }
  for (const HitDso& dso : hits.user) {
    // Not files: anonymous memory, the heap, the stack; [vdso] comes last.
    if (dso.name.empty() || dso.name.front() != '/' || dso.name.rfind("//", 0) == 0) continue;
    id = dso.id;
    if (id.empty()) {
      if (const std::string p = elf_file_build_id(dso.source.empty() ? dso.name : dso.source, id); !p.empty()) {
        problems.push_back(p);
        continue;
      }
    }
    entries.push_back(core::BuildIdEntry{PERF_RECORD_MISC_USER, -1, id, dso.name});
  }
  std::vector<std::byte> image;
  std::string p = vdso_image(image);
  if (p.empty()) p = elf_image_build_id(image, id);
  if (p.empty()) {
    entries.push_back(core::BuildIdEntry{PERF_RECORD_MISC_USER, -1, id, "[vdso]"});
  } else {
    problems.push_back("[vdso]: " + p);
  }
  return entries;
}

std::string fill_build_id_cache(const std::string& dir, const std::vector<core::BuildIdEntry>& entries,
                                const HitDsos& hits) {
  std::string first;
  std::vector<std::byte> vdso;
  std::map<std::string, std::string> sources;
  for (const HitDso& d : hits.user) sources[d.name] = d.source.empty() ? d.name : d.source;
  for (const core::BuildIdEntry& e : entries) {
    if (e.name == "[vdso]" && vdso.empty() && !vdso_image(vdso).empty()) continue;
    const auto source = sources.find(e.name);
    const std::string problem = add_entry(dir, e, source == sources.end() ? e.name : source->second, vdso);
    if (first.empty() && !problem.empty()) first = problem;
  }
  return first;
}

std::string default_build_id_dir() {
  const char* home = std::getenv("HOME");
  return home != nullptr && *home != '\0' ? std::string(home) + "/.debug" : "";
}

}  // namespace ringsim::real
