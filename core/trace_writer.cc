#include "core/trace_writer.h"

namespace ringsim::core {

const char* to_string(WriteMode mode) {
  switch (mode) {
    case WriteMode::serial: return "serial";
    case WriteMode::aio: return "aio";
  }
  return "unknown";
}

std::string validate(const WriterOptions& o) {
  auto range = [](const char* name, std::uint64_t v, std::uint64_t low, std::uint64_t high) -> std::string {
    if (v < low || v > high) {
      return std::string(name) + ": " + std::to_string(v) + " is outside " + std::to_string(low) + ".." +
             std::to_string(high);
    }
    return "";
  };
  if (auto e = range("cblocks", o.cblocks, kCblocksMin, kCblocksMax); !e.empty()) return e;
  if (auto e = range("mappings", o.mappings, 1, 4096); !e.empty()) return e;
  if (auto e = range("buffer_bytes", o.buffer_bytes, 8, std::uint64_t{1} << 32); !e.empty()) return e;
  if (auto e = range("backoff_min_ns", o.backoff_min_ns, 1, o.backoff_max_ns); !e.empty()) return e;
  if (auto e = range("eagain_attempts_max", o.eagain_attempts_max, 1, 1'000'000); !e.empty()) return e;
  if (auto e = range("retries_max", o.retries_max, 1, 1'000'000); !e.empty()) return e;
  if (auto e = range("suspend_ns", o.suspend_ns, 1, 3'600'000'000'000ull); !e.empty()) return e;
  if (auto e = range("suspends_max", o.suspends_max, 1, 100'000'000); !e.empty()) return e;
  return "";
}

}  // namespace ringsim::core
