#include "sim/replay.h"

#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ringsim::sim {
namespace {

constexpr const char* kFormat = "ringsim-replay";

std::string hex64(std::uint64_t v) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

bool parse_hex64(const std::string& text, std::uint64_t& out) {
  if (text.size() != 16) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}

std::string checksum_of(const nlohmann::json& body) {
  const std::string canonical = body.dump();
  return "xxh3:" + hex64(XXH3_64bits(canonical.data(), canonical.size()));
}

nlohmann::json body_of(const ReplayFile& r) {
  nlohmann::json tape = nlohmann::json::array();
  for (const Decision& d : r.tape) {
    tape.push_back(d.bound);
    tape.push_back(d.value);
  }
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kReplayVersion;
  j["config"] = to_json(r.config);
  j["violation"] = {{"property", r.property}, {"detail", r.detail}};
  j["recorded"] = {{"trace_hash", hex64(r.trace_hash)}, {"output_hash", hex64(r.output_hash)}};
  j["decisions"] = {{"count", r.tape.size()}, {"tape", std::move(tape)}};
  j["note"] = r.note;
  return j;
}

// Each check returns "" or the problem.
std::string need(const nlohmann::json& j, const char* key, nlohmann::json::value_t type) {
  const auto it = j.find(key);
  if (it == j.end()) return std::string("missing field '") + key + "'";
  const bool ok = type == nlohmann::json::value_t::number_unsigned ? it->is_number_unsigned() : it->type() == type;
  if (!ok) return std::string("field '") + key + "' has the wrong type";
  return "";
}

}  // namespace

std::string replay_to_text(const ReplayFile& replay) {
  nlohmann::json j = body_of(replay);
  j["checksum"] = checksum_of(j);
  // Readable layout, with the tape on one line (the checksum covers the
  // parsed content, not the layout).
  const std::string tape = j["decisions"]["tape"].dump();
  j["decisions"]["tape"] = "@tape@";
  std::string text = j.dump(1);
  const std::string marker = "\"@tape@\"";
  text.replace(text.find(marker), marker.size(), tape);
  return text + "\n";
}

// The fields an older version's config lacks, with the values that keep
// its run the run it was.
static void upgrade_config(nlohmann::json& config, std::uint64_t version) {
  if (!config.is_object()) return;
  // Version 4 had no producer_batch: its runs slept before each record.
  if (version == 4 && !config.contains("producer_batch")) config["producer_batch"] = std::uint64_t{1};
  // Versions 4 and 5 had no readers_per_cpu: one fiber read every ring.
  if (version <= 5 && !config.contains("readers_per_cpu")) config["readers_per_cpu"] = std::uint64_t{0};
  // Versions 4 to 6 had no help_min_quarters (nor helping readers).
  if (version <= 6 && !config.contains("help_min_quarters")) config["help_min_quarters"] = std::uint64_t{1};
  // Versions 4 to 7 had no staging_notify_rounds (the writing side took
  // rounds with the data).
  if (version <= 7 && !config.contains("staging_notify_rounds")) config["staging_notify_rounds"] = std::uint64_t{0};
}

// A field or value an older version did not have (`json`: the file's
// config as written).
static std::string version_problem(const nlohmann::json& json, const RunConfig& config, std::uint64_t version) {
  if (version <= 6 && json.contains("help_min_quarters")) {
    return "config.help_min_quarters: not a field of version " + std::to_string(version) + " (it came with version 7)";
  }
  if (version <= 7 && json.contains("staging_notify_rounds")) {
    return "config.staging_notify_rounds: not a field of version " + std::to_string(version) +
           " (it came with version 8)";
  }
  if (version <= 6 && config.readers_per_cpu > 1) {
    return "config.readers_per_cpu: " + std::to_string(config.readers_per_cpu) + " is outside 0..1 in version " +
           std::to_string(version) + " (2, helping readers, came with version 7)";
  }
  return "";
}

std::string replay_from_text(const std::string& text, ReplayFile& out) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    if (e.byte >= text.size()) return "truncated: the JSON ends early (at byte " + std::to_string(e.byte) + ")";
    return "not JSON (parse error at byte " + std::to_string(e.byte) + ")";
  } catch (const nlohmann::json::exception& e) {
    // out_of_range 406: a number no double holds ("1e9999").
    const std::string what = e.what();
    const std::size_t end_of_id = what.find("] ");
    return "not JSON (" + (end_of_id == std::string::npos ? what : what.substr(end_of_id + 2)) + ")";
  }
  if (!j.is_object()) return "not a ringsim replay (not a JSON object)";
  using T = nlohmann::json::value_t;
  if (std::string e = need(j, "format", T::string); !e.empty()) return "not a ringsim replay: " + e;
  if (j["format"] != kFormat) return "not a ringsim replay (format is " + quoted(j["format"].get<std::string>()) + ")";
  if (std::string e = need(j, "version", T::number_unsigned); !e.empty()) return e;
  const std::uint64_t version = j["version"].get<std::uint64_t>();
  if (version < kReplayVersionOldest || version > kReplayVersion) {
    return "replay format version " + std::to_string(version) + "; this ringsim reads versions " +
           std::to_string(kReplayVersionOldest) + " to " + std::to_string(kReplayVersion);
  }
  if (std::string e = need(j, "checksum", T::string); !e.empty()) return e;
  const std::string checksum = j["checksum"].get<std::string>();
  nlohmann::json body = j;
  body.erase("checksum");
  if (checksum != checksum_of(body)) return "checksum mismatch: the file was changed or is corrupt";

  for (auto [key, type] : {std::pair{"config", T::object}, std::pair{"violation", T::object},
                           std::pair{"recorded", T::object}, std::pair{"decisions", T::object},
                           std::pair{"note", T::string}}) {
    if (std::string e = need(body, key, type); !e.empty()) return e;
  }
  if (body.size() != 7) return "has fields this version does not know";
  ReplayFile r;
  const nlohmann::json as_written = body["config"];
  upgrade_config(body["config"], version);
  if (std::string e = from_json(body["config"], r.config); !e.empty()) return e;
  if (std::string e = version_problem(as_written, r.config, version); !e.empty()) return e;
  const nlohmann::json& violation = body["violation"];
  if (need(violation, "property", T::string) != "" || need(violation, "detail", T::string) != "") {
    return "violation: needs string fields property and detail";
  }
  r.property = violation["property"].get<std::string>();
  r.detail = violation["detail"].get<std::string>();
  const nlohmann::json& recorded = body["recorded"];
  if (need(recorded, "trace_hash", T::string) != "" || need(recorded, "output_hash", T::string) != "" ||
      !parse_hex64(recorded["trace_hash"].get<std::string>(), r.trace_hash) ||
      !parse_hex64(recorded["output_hash"].get<std::string>(), r.output_hash)) {
    return "recorded: needs trace_hash and output_hash as 16 hex digits";
  }
  const nlohmann::json& decisions = body["decisions"];
  if (std::string e = need(decisions, "count", T::number_unsigned); !e.empty()) return "decisions: " + e;
  if (std::string e = need(decisions, "tape", T::array); !e.empty()) return "decisions: " + e;
  const nlohmann::json& tape = decisions["tape"];
  const std::uint64_t count = decisions["count"].get<std::uint64_t>();
  if (tape.size() != 2 * count) {
    return "decisions: count says " + std::to_string(count) + " but the tape holds " +
           std::to_string(tape.size()) + " numbers (needs 2 per decision)";
  }
  r.tape.reserve(count);
  for (std::uint64_t i = 0; i < count; i++) {
    const nlohmann::json& b = tape[2 * i];
    const nlohmann::json& v = tape[2 * i + 1];
    if (!b.is_number_unsigned() || !v.is_number_unsigned()) {
      return "decisions: entry " + std::to_string(i) + " is not a pair of unsigned integers";
    }
    const Decision d{b.get<std::uint64_t>(), v.get<std::uint64_t>()};
    if (d.bound < 2 || d.value >= d.bound) {
      return "decisions: entry " + std::to_string(i) + " has value " + std::to_string(d.value) +
             " for bound " + std::to_string(d.bound);
    }
    r.tape.push_back(d);
  }
  r.note = body["note"].get<std::string>();
  out = std::move(r);
  return "";
}

std::string write_replay(const std::string& path, const ReplayFile& replay) {
  const std::string text = replay_to_text(replay);
  // Write to a temporary name and rename, so a replay file is either whole
  // or absent.
  const std::string temporary = path + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "wb");
  if (f == nullptr) return path + ": cannot write: " + std::strerror(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(temporary.c_str());
    return path + ": cannot write: " + std::strerror(written ? errno : saved);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(temporary.c_str());
    return path + ": cannot write: " + std::strerror(e);
  }
  return "";
}

std::string read_replay(const std::string& path, ReplayFile& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open: " + std::strerror(errno);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return path + ": cannot read: " + std::strerror(errno);
  const std::string text = buffer.str();
  if (text.empty()) return path + ": empty file, not a ringsim replay";
  const std::string problem = replay_from_text(text, out);
  if (!problem.empty()) return path + ": " + problem;
  return "";
}

}  // namespace ringsim::sim
