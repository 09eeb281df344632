#include "core/drops.h"

#include "core/verify.h"

namespace ringsim::core {

const char* to_string(DropCause cause) {
  switch (cause) {
    case DropCause::overwritten: return "overwritten";
    case DropCause::corrupt: return "corrupt";
    case DropCause::abandoned: return "abandoned";
    case DropCause::output_error: return "output error";
  }
  return "unknown";
}

void Drops::add(DropCause cause, const RecordCounts& records) {
  const auto index = static_cast<std::size_t>(cause);
  VERIFY(index < kDropCauses);
  counts_[index].events++;
  counts_[index].records.add(records);
}

void Drops::add_records(DropCause cause, const RecordCounts& records) {
  const auto index = static_cast<std::size_t>(cause);
  VERIFY(index < kDropCauses);
  VERIFY_MSG(counts_[index].events > 0, "records added to an event not counted");
  counts_[index].records.add(records);
}

void Drops::add_bytes(DropCause cause, std::uint64_t bytes) {
  RecordCounts counts;
  counts.bytes = bytes;
  add(cause, counts);
}

void Drops::add(const Drops& other) {
  for (std::size_t i = 0; i < kDropCauses; i++) {
    counts_[i].events += other.counts_[i].events;
    counts_[i].records.add(other.counts_[i].records);
  }
}

void Drops::add(DropCause cause, const DropCount& count) {
  const auto index = static_cast<std::size_t>(cause);
  VERIFY(index < kDropCauses);
  counts_[index].events += count.events;
  counts_[index].records.add(count.records);
}

std::uint64_t Drops::bytes() const {
  std::uint64_t total = 0;
  for (const DropCount& c : counts_) total += c.records.bytes;
  return total;
}

bool Drops::any() const {
  for (const DropCount& c : counts_) {
    if (c.events > 0) return true;
  }
  return false;
}

std::string describe(const Drops& drops) {
  std::string out;
  auto part = [&](DropCause cause, const char* event_noun) {
    const DropCount& c = drops[cause];
    if (c.events == 0) return;
    out += out.empty() ? "" : "; ";
    out += to_string(cause);
    if (c.records.records > 0) {
      out += " " + std::to_string(c.records.records) + " records (" + std::to_string(c.records.samples) +
             " samples),";
    }
    out += " " + std::to_string(c.records.bytes) + " bytes in " + std::to_string(c.events) + " " + event_noun;
  };
  part(DropCause::overwritten, "gaps");
  part(DropCause::corrupt, "rings");
  part(DropCause::abandoned, "rings");
  part(DropCause::output_error, "files");
  return out.empty() ? "none" : out;
}

}  // namespace ringsim::core
