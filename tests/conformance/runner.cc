#include "tests/conformance/runner.h"

#include <linux/perf_event.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "core/verify.h"
#include "tests/conformance/layout.h"

namespace ringsim::conformance {
namespace {

constexpr std::size_t kEventsMax = 8;
constexpr int kNoOwner = -1;

// The reader's side of one scenario.
// read()'s words as read_format lays them out (perf_read_one, and a
// sample's PERF_SAMPLE_READ: perf_output_read_one): value, then
// time_enabled, time_running, id, lost as asked; those not asked 0.
struct ReadFields {
  std::uint64_t value = 0, enabled = 0, running = 0, id = 0, lost = 0;
};
ReadFields read_fields(std::uint64_t format, std::span<const std::uint64_t> words) {
  ReadFields f;
  std::size_t i = 0;
  f.value = words[i++];
  if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) f.enabled = words[i++];
  if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) f.running = words[i++];
  if (format & PERF_FORMAT_ID) f.id = words[i++];
  if (format & PERF_FORMAT_LOST) f.lost = words[i++];
  return f;
}

class Runner {
 public:
  Runner(const Scenario& scenario, Backend& backend, Log& log) : s_(scenario), backend_(backend), log_(log) {
    VERIFY(s_.events.size() <= kEventsMax);
    owner_.fill(kNoOwner);
  }

  void run() {
    for (std::size_t i = 0; i < s_.steps.size() && !stopped_; i++) {
      step_ = static_cast<std::uint16_t>(i);
      do_step(s_.steps[i]);
      if (s_.poll_after_each_step && !stopped_) observe_all();
    }
  }

 private:
  struct Reader {
    std::uint32_t pages = 0;
    bool writable = true;
    bool backward = false;
    std::uint64_t read = 0;  // position up to which the reader has read
    std::uint64_t tail = 0;  // what it stored as data_tail
    std::uint32_t records = 0;
  };

  Observation at(Kind kind, std::size_t event) const {
    Observation o;
    o.step = step_;
    o.kind = kind;
    o.event = static_cast<std::uint8_t>(event);
    return o;
  }
  void result(std::size_t event, int rc) {
    Observation o = at(Kind::result, event);
    o.value = static_cast<std::uint64_t>(rc);
    log_.add(o);
  }
  void log_poll(std::size_t event, short revents) {
    Observation o = at(Kind::poll, event);
    o.value = static_cast<std::uint64_t>(revents & (POLLIN | POLLHUP | POLLERR));
    log_.add(o);
  }
  bool has_data(std::size_t event) const {
    return owner_[event] == static_cast<int>(event) && readers_[event].pages > 0;
  }

  void observe_all() {
    for (std::size_t e = 0; e < s_.events.size(); e++) {
      if (!open_[e]) continue;
      if (has_data(e)) {
        Observation o = at(Kind::head, e);
        o.value = backend_.head(e);
        log_.add(o);
      }
      log_poll(e, backend_.poll(e));
    }
  }

  void do_step(const Step& st) {
    const std::size_t e = st.event;
    VERIFY(e < s_.events.size());
    switch (st.op) {
      case Op::open: {
        const int rc = backend_.open(e);
        open_[e] = rc == 0;
        if (rc == 0) ids_[e] = backend_.id(e);
        result(e, rc);
        // Every scenario's events open: the rest would be about nothing.
        stopped_ = rc != 0;
        break;
      }
      case Op::map: {
        const int rc = backend_.map(e, st.pages, st.writable);
        if (rc == 0) {
          owner_[e] = static_cast<int>(e);
          readers_[e] = Reader{st.pages, st.writable, s_.events[e].backward};
        }
        result(e, rc);
        break;
      }
      case Op::map_aux:
        result(e, backend_.map_aux(e, st.aux, st.writable));
        break;
      case Op::unmap:
        backend_.unmap(e);
        for (int& o : owner_) o = o == static_cast<int>(e) ? kNoOwner : o;
        break;
      case Op::set_output: {
        VERIFY(st.other < s_.events.size());
        const int rc = backend_.set_output(e, st.other);
        if (rc == 0) owner_[e] = owner_[st.other];
        result(e, rc);
        break;
      }
      case Op::enable:
      case Op::disable:
      case Op::pause:
      case Op::resume:
        result(e, backend_.control(e, st.op));
        break;
      case Op::act:
        act(st);
        break;
      case Op::spawn_child:
        backend_.spawn_child();
        break;
      case Op::child_exit:
        backend_.child_exit();
        break;
      case Op::child_exit_polling:
        log_poll(e, backend_.child_exit_polling(e));
        break;
      case Op::poll:
        log_poll(e, backend_.poll(e));
        if (st.other != kNoEvent) log_poll(st.other, backend_.poll(st.other));
        break;
      case Op::read:
        read(st);
        break;
      case Op::consume:
        consume(e, st.count);
        break;
      case Op::read_values:
        read_values(e);
        break;
      case Op::control_page:
        control_page(e);
        break;
    }
  }

  std::uint8_t letter(std::uint64_t id) const {
    for (std::size_t e = 0; e < s_.events.size(); e++) {
      if (open_[e] && ids_[e] == id) return static_cast<std::uint8_t>(e);
    }
    return kUnknownEvent;
  }

  // read() with the event's read_format (perf_read_one: value, then
  // time_enabled, time_running, id, lost as asked). The count is exact:
  // every source counts occurrences the scenario makes (tracepoint hits
  // of the traced task, its own page faults; a dummy event counts
  // nothing). The times are shown only as zero or not and equal or not.
  void read_values(std::size_t e) {
    const ReadValues v = backend_.read_values(e);
    const std::uint64_t format = s_.events[e].read_format;
    Observation o = at(Kind::read_bytes, e);
    o.value = v.bytes;
    log_.add(o);
    const ReadFields f = read_fields(format, v.words);
    o = at(Kind::count, e);
    o.value = f.value;
    log_.add(o);
    if (format & (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)) {
      o = at(Kind::times, e);
      o.value = time_bits(format, f.enabled, f.running);
      log_.add(o);
    }
    if (format & PERF_FORMAT_ID) {
      o = at(Kind::read_id, e);
      o.writer = letter(f.id);
      log_.add(o);
    }
    if (format & PERF_FORMAT_LOST) {
      o = at(Kind::lost_samples, e);
      o.value = f.lost;
      log_.add(o);
    }
  }

  void control_page(std::size_t e) {
    const ControlPage p = backend_.control_page(e);
    const std::uint64_t fields[kPageFields] = {p.version,  p.compat_version, p.capabilities, p.pmc_width,
                                               p.index,    p.size,           p.data_tail,    p.aux_head,
                                               p.aux_tail, p.aux_offset,     p.aux_size};
    Observation o = at(Kind::data_offset, e);
    o.value = p.data_offset;
    log_.add(o);
    o = at(Kind::data_size, e);
    o.value = p.data_size;
    log_.add(o);
    for (std::size_t f = 0; f < kPageFields; f++) {
      o = at(Kind::page_field, e);
      o.index = static_cast<std::uint32_t>(f);
      o.value = fields[f];
      log_.add(o);
    }
  }

  void act(const Step& st) {
    const std::size_t e = st.event;
    std::uint32_t woke = 0;
    for (std::uint32_t k = 1; k <= st.count; k++) {
      backend_.act(st.action, st.by_child, st.name);
      if (st.poll_each && (backend_.poll(e) & POLLIN)) {
        Observation o = at(Kind::woke, e);
        o.index = ++woke;
        o.value = k;
        o.lost = backend_.head(owner(e));
        log_.add(o);
      }
      if (st.consume_above > 0) {
        const std::size_t r = owner(e);
        const std::uint64_t head = backend_.head(r);
        if (head - readers_[r].tail > st.consume_above) {
          readers_[r].read = head;
          consume(r, 0);
        }
      }
    }
  }

  std::size_t owner(std::size_t event) const {
    VERIFY(owner_[event] != kNoOwner);
    return static_cast<std::size_t>(owner_[event]);
  }

  void consume(std::size_t event, std::uint32_t bytes) {
    const std::size_t r = owner(event);
    Reader& reader = readers_[r];
    VERIFY(reader.writable);  // a read-only mapping cannot store data_tail
    if (bytes == 0) {
      reader.tail = reader.read;
    } else {
      VERIFY(!reader.backward);
      reader.tail += bytes;
    }
    backend_.store_tail(r, reader.tail);
  }

  void read(const Step& st) {
    const std::size_t r = owner(st.event);
    Reader& reader = readers_[r];
    const std::span<const std::byte> data = backend_.data(r);
    VERIFY(!data.empty());
    const std::uint64_t head = backend_.head(r);
    first_back_ = 0;
    last_time_ = 0;
    if (reader.backward) {
      // Walk up from head: up to what was read before, one area at most,
      // whole records only.
      const std::uint64_t limit = std::min<std::uint64_t>(reader.read - head, data.size());
      for (std::uint64_t offset = 0; offset < limit;) {
        const std::uint16_t size = record_at(r, data, head + offset, limit - offset);
        if (size == 0) break;
        offset += size;
      }
    } else {
      std::uint64_t pos = st.from != 0 ? st.from : reader.read;
      if (head - pos > data.size()) {
        // A read-only forward ring overwrote what the reader had not read:
        // it cannot find a record boundary (docs/conformance.md). A
        // writable ring never does.
        VERIFY(!reader.writable);
        Observation o = at(Kind::overrun, st.event);
        o.value = head - pos;
        log_.add(o);
        pos = head;
      }
      while (pos != head) {
        const std::uint16_t size = record_at(r, data, pos, head - pos);
        if (size == 0) break;
        pos += size;
      }
    }
    reader.read = head;
    if (st.time_order) {
      Observation o = at(Kind::time_order, st.event);
      o.value = first_back_;
      log_.add(o);
    }
  }

  static void copy(std::span<const std::byte> data, std::uint64_t pos, void* out, std::size_t n) {
    const std::uint64_t mask = data.size() - 1;
    auto* o = static_cast<std::byte*>(out);
    for (std::size_t i = 0; i < n; i++) o[i] = data[(pos + i) & mask];
  }
  static std::uint64_t u64_at(std::span<const std::byte> data, std::uint64_t pos) {
    std::uint64_t v;
    copy(data, pos, &v, 8);
    return v;
  }

  // The only event writing into ring r, if there is one.
  std::uint8_t only_writer(std::size_t r) const {
    std::size_t writers = 0, only = 0;
    for (std::size_t e = 0; e < s_.events.size(); e++) {
      if (!open_[e] || owner_[e] != static_cast<int>(r)) continue;
      writers++;
      only = e;
    }
    return writers == 1 ? static_cast<std::uint8_t>(only) : kUnknownEvent;
  }

  // The event that wrote a record of ring r: by the id the record carries
  // when every writer of the ring puts it there, else the ring's only
  // writer.
  std::uint8_t writer(std::size_t r, std::span<const std::byte> data, std::uint64_t pos,
                      const perf_event_header& h) const {
    const std::uint8_t only_one = only_writer(r);
    std::size_t writers = 0;
    bool all_identified = true;
    for (std::size_t e = 0; e < s_.events.size(); e++) {
      if (!open_[e] || owner_[e] != static_cast<int>(r)) continue;
      writers++;
      const EventSpec& spec = s_.events[e];
      all_identified = all_identified && has_identifier(spec) && (h.type == PERF_RECORD_SAMPLE || spec.sample_id_all);
    }
    std::uint64_t id = 0;
    if (h.type == PERF_RECORD_LOST) {
      id = u64_at(data, pos + 8);
    } else if (all_identified && writers > 0) {
      id = u64_at(data, h.type == PERF_RECORD_SAMPLE ? pos + 8 : pos + h.size - 8);
    } else {
      return only_one;
    }
    return letter(id);
  }

  // Logs the record at pos if it is whole within `room` bytes; returns its
  // size (0: none).
  std::uint16_t record_at(std::size_t r, std::span<const std::byte> data, std::uint64_t pos, std::uint64_t room) {
    perf_event_header h;
    copy(data, pos, &h, sizeof h);
    if (h.size < sizeof h || h.size > room) return 0;
    Observation o = at(Kind::record, r);
    o.index = ++readers_[r].records;
    o.value = pos;
    o.type = h.type;
    o.misc = h.misc;
    o.size = h.size;
    o.writer = writer(r, data, pos, h);
    if (h.type == PERF_RECORD_LOST) o.lost = u64_at(data, pos + 16);
    log_.add(o);
    // The record's layout is its writer's: the ring's only writer if it has
    // one (a software event's sample may carry another event's id: fidelity
    // row 21), else the event whose id it carries.
    const std::uint8_t layout = only_writer(r) != kUnknownEvent ? only_writer(r) : o.writer;
    const EventSpec* spec = layout != kUnknownEvent ? &s_.events[layout] : nullptr;
    RecordBody body = read_body(data, pos, h.type, h.misc, h.size, spec);
    // A frequency-mode sample's PERIOD above 1 comes from the machine's
    // timing (EventSpec::freq).
    if (spec != nullptr && spec->freq > 0 && body.has_period && body.period > 1) body.period = kAdaptedPeriod;
    log_body(o, body, spec);
    // Ring order against time order: the sample's or trailer's time
    // (perf_event_header__init_id), then a FORK's or EXIT's own, taken
    // after it (perf_event_task_output).
    if (spec != nullptr) {
      const std::optional<std::uint32_t> t = time_offset(h.type, h.size, *spec);
      if (t) order_time(u64_at(data, pos + *t), o.index);
    }
    if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) order_time(body.time, o.index);
    return h.size;
  }

  void order_time(std::uint64_t time, std::uint32_t record) {
    if (time < last_time_ && first_back_ == 0) first_back_ = record;
    last_time_ = std::max(last_time_, time);
  }

  // The record's body and trailer, normalised (observation.h).
  void log_body(const Observation& record, const RecordBody& b, const EventSpec* spec) {
    if (b.npids == 0 && !b.has_tid && !b.has_cpu && !b.has_id && !b.has_stream_id && !b.has_period && !b.has_read) {
      return;
    }
    Observation o = record;
    o.kind = Kind::body;
    o.value = 0;
    o.size = 0;
    o.writer = kUnknownEvent;
    o.lost = 0;
    for (std::uint32_t i = 0; i < b.npids; i++) o.who[i] = backend_.who(b.pids[i]);
    if (b.has_tid) o.who[4] = backend_.who(b.id_pid), o.who[5] = backend_.who(b.id_tid);
    if (b.has_cpu) o.cpu = b.cpu;
    if (b.has_id) o.ids[0] = letter(b.id);
    if (b.has_stream_id) o.ids[1] = letter(b.stream_id);
    if (b.has_period) o.period = b.period;
    if (b.has_read) log_read(o, b, *spec);
    const std::size_t name = strnlen(b.name.data(), b.name.size());
    if (record.type == PERF_RECORD_COMM) std::memcpy(o.text.data(), b.name.data(), std::min(name, o.text.size() - 1));
    if (record.type == PERF_RECORD_MMAP2) log_mmap2(o, b, name);
    log_.add(o);
  }

  // A sample's PERF_SAMPLE_READ as read() shows (read_values): the count
  // exact, the times as zero or not and equal or not, the id as a letter.
  void log_read(Observation& o, const RecordBody& b, const EventSpec& spec) {
    const std::uint64_t format = spec.read_format;
    const ReadFields f = read_fields(format, b.read);
    o.read_value = f.value;
    o.read_times = static_cast<std::uint8_t>(time_bits(format, f.enabled, f.running));
    if (format & PERF_FORMAT_ID) o.read_id = letter(f.id);
    if (format & PERF_FORMAT_LOST) o.read_lost = f.lost;
  }

  // An MMAP2's address as one of the scenario's mappings or not, its file
  // as the suite's executable (device, inode, generation, build-id) or not.
  void log_mmap2(Observation& o, const RecordBody& b, std::size_t name) {
    const SuiteFiles& f = backend_.files();
    o.addr = backend_.scenario_mapping(b.addr) ? 1 : 0;
    o.len = b.len;
    o.pgoff = b.pgoff;
    o.prot = b.prot;
    o.flags = b.flags;
    if (o.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
      o.build_id_size = b.build_id_size;
      const bool same = b.build_id_size == f.exec_build_id_size && f.exec_has_build_id &&
                        std::memcmp(b.build_id.data(), f.exec_build_id.data(), b.build_id.size()) == 0;
      o.file = same ? kFileBuildId : 0;
    } else {
      o.file = (b.maj == f.exec_major ? kFileMajor : 0) | (b.min == f.exec_minor ? kFileMinor : 0) |
               (b.ino == f.exec_ino ? kFileIno : 0) | (b.generation == f.exec_generation ? kFileGeneration : 0);
    }
    if (f.exec_file.size() == name && std::memcmp(f.exec_file.data(), b.name.data(), name) == 0) {
      o.text[0] = '=';
    } else {
      const std::size_t n = std::min(name, o.text.size() - 1);
      std::memcpy(o.text.data(), b.name.data() + name - n, n);
    }
  }

  const Scenario& s_;
  Backend& backend_;
  Log& log_;
  std::uint16_t step_ = 0;
  bool stopped_ = false;  // an event could not be opened
  std::array<bool, kEventsMax> open_{};
  std::array<std::uint64_t, kEventsMax> ids_{};
  std::array<int, kEventsMax> owner_{};
  std::array<Reader, kEventsMax> readers_{};
  std::uint64_t last_time_ = 0;
  std::uint32_t first_back_ = 0;
};

}  // namespace

void run(const Scenario& scenario, Backend& backend, Log& log) {
  log.clear();
  log.touch();
  backend.begin(scenario);
  Runner(scenario, backend, log).run();
  backend.end();
}

}  // namespace ringsim::conformance
