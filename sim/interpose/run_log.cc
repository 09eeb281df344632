#include "sim/interpose/run_log.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace ringsim::sim::interpose {
namespace {

constexpr char kMagic[8] = {'R', 'S', 'I', 'M', 'R', 'U', 'N', '\n'};
constexpr std::uint64_t kCountMax = std::uint64_t{1} << 28;

class Out {
 public:
  void u64(std::uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void bytes(const std::vector<std::byte>& b) {
    u64(b.size());
    raw(b.data(), b.size());
  }
  void raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    buf.insert(buf.end(), c, c + n);
  }
  std::string buf;
};

class In {
 public:
  explicit In(const std::string& b) : buf_(b) {}
  bool u64(std::uint64_t& v) { return raw(&v, 8); }
  bool count(std::uint64_t& n) { return u64(n) && n <= kCountMax && n <= buf_.size(); }
  bool str(std::string& s) {
    std::uint64_t n = 0;
    if (!count(n) || n > buf_.size() - at_) return false;
    s.assign(buf_, at_, n);
    at_ += n;
    return true;
  }
  bool bytes(std::vector<std::byte>& b) {
    std::uint64_t n = 0;
    if (!count(n) || n > buf_.size() - at_) return false;
    b.resize(n);
    return raw(b.data(), n);
  }
  bool flag(bool& f) {
    std::uint64_t v = 0;
    if (!u64(v) || v > 1) return false;
    f = v == 1;
    return true;
  }
  bool raw(void* p, std::size_t n) {
    if (n > buf_.size() - at_) return false;
    std::memcpy(p, buf_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool done() const { return at_ == buf_.size(); }

 private:
  const std::string& buf_;
  std::size_t at_ = 0;
};

// One ring of the log (false: truncated or corrupt).
bool read_ring(In& in, LoggedRing& r) {
  std::uint64_t writable = 0, backward = 0, n = 0;
  if (!in.u64(r.owner_id) || !in.u64(writable) || !in.u64(backward) || !in.u64(r.size_bytes) || !in.u64(r.head) ||
      !in.u64(r.tail) || !in.u64(r.dropped) || !in.u64(r.dropped_unreported) || !in.u64(r.lost_reported) ||
      !in.str(r.bad_tail)) {
    return false;
  }
  r.writable = writable != 0;
  r.backward = backward != 0;
  if (!in.count(n)) return false;
  r.pauses.resize(n);
  for (std::uint64_t& h : r.pauses) {
    if (!in.u64(h)) return false;
  }
  LoggedRing::Aux& a = r.aux;
  if (!in.u64(a.size_bytes) || !in.u64(a.owner_id) || !in.u64(a.head) || !in.u64(a.tail) || !in.u64(a.transactions) ||
      !in.u64(a.truncated) || !in.u64(a.truncated_bytes) || !in.u64(a.full_disables) || !in.str(a.bad_tail)) {
    return false;
  }
  if (!in.count(n)) return false;
  r.records.resize(n);
  for (LoggedRecord& rec : r.records) {
    std::uint64_t type = 0;
    if (!in.u64(type) || !in.u64(rec.time_ns) || !in.u64(rec.event) || !in.u64(rec.lost) || !in.u64(rec.position) ||
        !in.bytes(rec.bytes)) {
      return false;
    }
    rec.type = static_cast<std::uint32_t>(type);
  }
  return true;
}

}  // namespace

std::string write_run_log(const std::string& path, const RunLog& log) {
  Out o;
  o.raw(kMagic, sizeof kMagic);
  o.u64(kRunLogVersion);
  for (const std::uint64_t v :
       {log.seed, log.steps, log.virtual_ns, log.samples, log.sideband, log.bursts, log.sigusr2, log.control_traps,
        log.interleaved_steps}) {
    o.u64(v);
  }
  for (const bool f : {log.started, log.ended, log.sigint, log.sigchld, log.sigint_handled}) o.u64(f ? 1 : 0);
  o.u64(log.findings.size());
  for (const std::string& f : log.findings) o.str(f);
  o.u64(log.refused.size());
  for (const std::string& f : log.refused) o.str(f);
  o.u64(log.events.size());
  for (const LoggedEvent& e : log.events) {
    for (const std::uint64_t v : {e.id, std::uint64_t{e.type}, e.config, e.sample_type,
                                  static_cast<std::uint64_t>(static_cast<std::int64_t>(e.pid)),
                                  static_cast<std::uint64_t>(static_cast<std::int64_t>(e.cpu)), e.lost_samples}) {
      o.u64(v);
    }
  }
  o.u64(log.rings.size());
  for (const LoggedRing& r : log.rings) {
    for (const std::uint64_t v : {r.owner_id, std::uint64_t{r.writable}, std::uint64_t{r.backward}, r.size_bytes,
                                  r.head, r.tail, r.dropped, r.dropped_unreported, r.lost_reported}) {
      o.u64(v);
    }
    o.str(r.bad_tail);
    o.u64(r.pauses.size());
    for (const std::uint64_t h : r.pauses) o.u64(h);
    const LoggedRing::Aux& a = r.aux;
    for (const std::uint64_t v : {a.size_bytes, a.owner_id, a.head, a.tail, a.transactions, a.truncated,
                                  a.truncated_bytes, a.full_disables}) {
      o.u64(v);
    }
    o.str(a.bad_tail);
    o.u64(r.records.size());
    for (const LoggedRecord& rec : r.records) {
      for (const std::uint64_t v : {std::uint64_t{rec.type}, rec.time_ns, rec.event, rec.lost, rec.position}) o.u64(v);
      o.bytes(rec.bytes);
    }
  }
  o.u64(log.renamed.size());
  for (const std::string& name : log.renamed) o.str(name);
  o.u64(log.numbered.size());
  for (const std::string& name : log.numbered) o.str(name);
  o.u64(log.removed.size());
  for (const RunLog::Removed& r : log.removed) {
    o.str(r.path);
    o.str(r.kept);
  }
  const DiskStats& d = log.disk;
  for (const std::uint64_t v : {d.writes, d.bytes, d.short_writes, d.eintr, d.eagain, d.eio, d.enospc, d.aio_submitted,
                                d.aio_short, d.aio_errors}) {
    o.u64(v);
  }
  o.u64(log.tape.size());
  for (const Decision& t : log.tape) o.u64(t.bound), o.u64(t.value);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return "run log " + tmp + ": " + std::strerror(errno);
  const bool ok = std::fwrite(o.buf.data(), 1, o.buf.size(), f) == o.buf.size();
  if (std::fclose(f) != 0 || !ok) return "run log " + tmp + ": write failed";
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return "run log " + path + ": " + std::strerror(errno);
  return "";
}

std::string read_run_log(const std::string& path, RunLog& log) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "run log " + path + ": cannot open (the target exited before writing it, or never ran)";
  const std::string buf((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  In in(buf);
  char magic[8];
  std::uint64_t version = 0;
  if (!in.raw(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return "run log " + path + ": not a run log";
  if (!in.u64(version) || version != kRunLogVersion) return "run log " + path + ": version not supported";
  const std::string bad = "run log " + path + ": truncated or corrupt";
  for (std::uint64_t* v :
       {&log.seed, &log.steps, &log.virtual_ns, &log.samples, &log.sideband, &log.bursts, &log.sigusr2,
        &log.control_traps, &log.interleaved_steps}) {
    if (!in.u64(*v)) return bad;
  }
  for (bool* f : {&log.started, &log.ended, &log.sigint, &log.sigchld, &log.sigint_handled}) {
    if (!in.flag(*f)) return bad;
  }
  std::uint64_t n = 0;
  for (std::vector<std::string>* list : {&log.findings, &log.refused}) {
    if (!in.count(n)) return bad;
    list->resize(n);
    for (std::string& s : *list) {
      if (!in.str(s)) return bad;
    }
  }
  if (!in.count(n)) return bad;
  log.events.resize(n);
  for (LoggedEvent& e : log.events) {
    std::uint64_t type = 0, pid = 0, cpu = 0;
    if (!in.u64(e.id) || !in.u64(type) || !in.u64(e.config) || !in.u64(e.sample_type) || !in.u64(pid) ||
        !in.u64(cpu) || !in.u64(e.lost_samples)) {
      return bad;
    }
    e.type = static_cast<std::uint32_t>(type);
    e.pid = static_cast<std::int32_t>(static_cast<std::int64_t>(pid));
    e.cpu = static_cast<std::int32_t>(static_cast<std::int64_t>(cpu));
  }
  if (!in.count(n)) return bad;
  log.rings.resize(n);
  for (LoggedRing& r : log.rings) {
    if (!read_ring(in, r)) return bad;
  }
  if (!in.count(n)) return bad;
  log.renamed.resize(n);
  for (std::string& name : log.renamed) {
    if (!in.str(name)) return bad;
  }
  if (!in.count(n)) return bad;
  log.numbered.resize(n);
  for (std::string& name : log.numbered) {
    if (!in.str(name)) return bad;
  }
  if (!in.count(n)) return bad;
  log.removed.resize(n);
  for (RunLog::Removed& r : log.removed) {
    if (!in.str(r.path) || !in.str(r.kept)) return bad;
  }
  DiskStats& d = log.disk;
  for (std::uint64_t* v : {&d.writes, &d.bytes, &d.short_writes, &d.eintr, &d.eagain, &d.eio, &d.enospc,
                           &d.aio_submitted, &d.aio_short, &d.aio_errors}) {
    if (!in.u64(*v)) return bad;
  }
  if (!in.count(n)) return bad;
  log.tape.resize(n);
  for (Decision& t : log.tape) {
    if (!in.u64(t.bound) || !in.u64(t.value)) return bad;
  }
  if (!in.done()) return bad;
  return "";
}

}  // namespace ringsim::sim::interpose
