#include "tests/conformance/suite.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/verify.h"
#include "tests/conformance/runner.h"

namespace ringsim::conformance {

const char* to_string(Status status) {
  switch (status) {
    case Status::match: return "match";
    case Status::differ: return "DIFFER";
    case Status::known: return "known";
    case Status::unstable: return "UNSTABLE";
    case Status::skipped: return "SKIPPED";
    case Status::foreign: return "FOREIGN";
  }
  return "?";
}

namespace {

constexpr std::size_t kPageBytes = 4096;

// What build_id_parse finds in the first page of an ELF file: a PT_NOTE
// inside the page holding an NT_GNU_BUILD_ID note; its bytes into `files`.
bool build_id_in_first_page(const std::string& path, SuiteFiles& files) {
  unsigned char page[kPageBytes] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  VERIFY(fd >= 0);
  const ssize_t n = pread(fd, page, sizeof page, 0);
  close(fd);
  VERIFY(n >= static_cast<ssize_t>(sizeof(Elf64_Ehdr)));
  Elf64_Ehdr eh;
  std::memcpy(&eh, page, sizeof eh);
  for (std::size_t i = 0; i < eh.e_phnum && i < 64; i++) {
    Elf64_Phdr ph;
    const std::size_t at = eh.e_phoff + i * sizeof ph;
    if (at + sizeof ph > static_cast<std::size_t>(n)) return false;
    std::memcpy(&ph, page + at, sizeof ph);
    if (ph.p_type != PT_NOTE || ph.p_offset + ph.p_filesz > static_cast<std::size_t>(n)) continue;
    for (std::size_t note = ph.p_offset; note + sizeof(Elf64_Nhdr) <= ph.p_offset + ph.p_filesz;) {
      Elf64_Nhdr nh;
      std::memcpy(&nh, page + note, sizeof nh);
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4) {
        const std::size_t desc = note + sizeof nh + 4;
        const std::size_t size = std::min<std::size_t>(nh.n_descsz, files.exec_build_id.size());
        if (desc + size > static_cast<std::size_t>(n)) return false;
        std::memcpy(files.exec_build_id.data(), page + desc, size);
        files.exec_build_id_size = static_cast<std::uint8_t>(size);
        return true;
      }
      note += sizeof nh + ((nh.n_namesz + 3) & ~3u) + ((nh.n_descsz + 3) & ~3u);
    }
  }
  return false;
}

// The inode an MMAP2 of the file names (perf_event_mmap_event: MAJOR and
// MINOR of i_sb->s_dev, i_ino, i_generation).
void inode_of(SuiteFiles& files) {
  const int fd = ::open(files.exec_file.c_str(), O_RDONLY | O_CLOEXEC);
  VERIFY(fd >= 0);
  struct stat st;
  VERIFY(fstat(fd, &st) == 0);
  files.exec_major = major(st.st_dev);
  files.exec_minor = minor(st.st_dev);
  files.exec_ino = st.st_ino;
  int generation = 0;
  if (ioctl(fd, FS_IOC_GETVERSION, &generation) == 0) files.exec_generation = static_cast<std::uint32_t>(generation);
  close(fd);
}

// The machine's bits of a control page: those of a dummy software event
// of this thread, mapped without data pages (MachinePage).
MachinePage machine_page() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  MachinePage m;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return m;
  void* p = mmap(nullptr, kPageBytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p != MAP_FAILED) {
    const auto* page = static_cast<const perf_event_mmap_page*>(p);
    constexpr std::uint64_t kMachineBits = 0xfull << 2;  // cap_user_rdpmc, _time, _time_zero, _time_short
    m.capabilities = page->capabilities & kMachineBits;
    m.pmc_width = page->pmc_width;
    munmap(p, kPageBytes);
  }
  close(fd);
  return m;
}

}  // namespace

SuiteFiles suite_files() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  VERIFY(n > 0);
  SuiteFiles files;
  files.exec_file.assign(path, static_cast<std::size_t>(n));
  files.exec_has_build_id = build_id_in_first_page(files.exec_file, files);
  inode_of(files);
  files.machine = machine_page();
  return files;
}

std::string foreign_influence(const Scenario& scenario, const Log& real_log) {
  for (const EventSpec& e : scenario.events) {
    if (e.build_id) return "";  // the scenario's own build-id event: the simulated kernel models it
  }
  for (const Observation& o : real_log.entries()) {
    if (o.kind != Kind::record || o.type != PERF_RECORD_MMAP2) continue;
    if ((o.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) == 0) continue;
    return "step " + std::to_string(o.step) + ": the real kernel's " + value(o) +
           " says build-id, which no event of this scenario asked for: another process on this machine records "
           "with build-ids (attr.build_id; fidelity row 20), so this observable is not the scenario's own";
  }
  return "";
}

namespace {

// An event the real kernel did not permit (a system-wide event in a user
// namespace, say): the scenario cannot run here.
std::string not_permitted(const Scenario& scenario, const Log& real_log) {
  for (const Observation& o : real_log.entries()) {
    if (o.kind != Kind::result || scenario.steps[o.step].op != Op::open) continue;
    if (o.value == EACCES || o.value == EPERM) {
      return "perf_event_open of " + event_name(o.event) + " is not permitted here (" + value(o) + ")";
    }
  }
  return "";
}

}  // namespace

namespace {

// A scenario whose real log depends on timing in rare runs
// (Scenario::timing): each real run against the simulated log.
constexpr int kTimingAttempts = 3;

Outcome run_timed(const Scenario& scenario, Backend& real, int repeat, Log& real_log, const Log& sim_log) {
  Outcome out;
  out.scenario = &scenario;
  const int runs = repeat > 1 ? repeat : kTimingAttempts;
  int differed = 0;
  Comparison first_difference;
  Comparison last;
  for (int i = 0; i < runs; i++) {
    run(scenario, real, real_log);
    const std::string refused = not_permitted(scenario, real_log);
    const std::string foreign = foreign_influence(scenario, real_log);
    if (!refused.empty() || !foreign.empty()) {
      out.status = refused.empty() ? Status::foreign : Status::skipped;
      out.difference = refused.empty() ? foreign : refused;
      return out;
    }
    last = compare(scenario, real_log, sim_log);
    if (!last.match && differed++ == 0) first_difference = last;
    if (repeat == 1 && last.match) break;
  }
  out.observables = last.compared;
  if (repeat > 1 && differed > 0 && differed < runs) {
    out.status = Status::unstable;
    out.difference = std::to_string(differed) + " of " + std::to_string(runs) + " real runs differ (timing: " +
                     scenario.timing + "), the first: " + first_difference.first_difference;
    return out;
  }
  const bool matched = repeat > 1 ? differed == 0 : last.match;
  out.status = matched ? Status::match : scenario.known.empty() ? Status::differ : Status::known;
  if (!matched) out.difference = first_difference.first_difference;
  if (!matched && repeat == 1) out.difference += " (in each of " + std::to_string(kTimingAttempts) + " attempts)";
  return out;
}

}  // namespace

Outcome run_scenario(const Scenario& scenario, Backend& real, Backend& simulated, int repeat, Log& real_log,
                     Log& sim_log) {
  VERIFY(repeat >= 1);
  Outcome out;
  out.scenario = &scenario;
  run(scenario, simulated, sim_log);
  if (!scenario.timing.empty()) return run_timed(scenario, real, repeat, real_log, sim_log);
  Log first;
  for (int i = 0; i < repeat; i++) {
    run(scenario, real, real_log);
    const std::string refused = not_permitted(scenario, real_log);
    if (!refused.empty()) {
      out.status = Status::skipped;
      out.difference = refused;
      return out;
    }
    const std::string foreign = foreign_influence(scenario, real_log);
    if (!foreign.empty()) {
      out.status = Status::foreign;
      out.difference = foreign;
      return out;
    }
    if (i == 0 && repeat > 1) first = real_log;
    if (i == 0) continue;
    const Comparison again = compare(scenario, first, real_log);
    if (!again.match) {
      out.status = Status::unstable;
      out.observables = again.compared;
      out.difference = "real run " + std::to_string(i + 1) + " vs run 1: " + again.first_difference;
      return out;
    }
  }
  const Comparison c = compare(scenario, real_log, sim_log);
  out.observables = c.compared;
  out.status = c.match ? Status::match : scenario.known.empty() ? Status::differ : Status::known;
  out.difference = c.first_difference;
  if (out.status == Status::known) out.difference += " (known: " + scenario.known + ")";
  return out;
}

std::string table(const std::vector<Outcome>& outcomes, const std::string& skipped_why) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-42s %6s %12s  %s\n", "scenario", "steps", "observables", "result");
  out << line;
  std::size_t counts[6] = {}, observables = 0;
  for (const Outcome& o : outcomes) {
    std::snprintf(line, sizeof line, "%-42s %6zu %12zu  %s\n", o.scenario->name.c_str(), o.scenario->steps.size(),
                  o.observables, to_string(o.status));
    out << line;
    counts[static_cast<int>(o.status)]++;
    observables += o.observables;
  }
  std::snprintf(line, sizeof line,
                "%-42s %6s %12zu  %zu match, %zu differ, %zu known, %zu unstable, %zu skipped, %zu foreign\n",
                ("total: " + std::to_string(outcomes.size()) + " scenarios").c_str(), "", observables, counts[0],
                counts[1], counts[2], counts[3], counts[4], counts[5]);
  out << line;
  if (!skipped_why.empty()) out << "skipped: " << skipped_why << "\n";
  out << "\nnot produced on this machine (fidelity.md row: behaviour: why; what the simulated kernel does):\n";
  for (const Unproducible& u : unproducible()) {
    out << "  " << u.row << ": " << u.behaviour << ": " << u.why << "; simulated: " << u.simulated << "\n";
  }
  bool header = false;
  for (const Outcome& o : outcomes) {
    if (o.difference.empty()) continue;
    if (!header) out << "\nfirst differences (and why skipped):\n";
    header = true;
    out << "  " << o.scenario->name << ": " << o.difference << "\n";
  }
  return out.str();
}

}  // namespace ringsim::conformance
