// Fuzzes the replay-file reader (sim/replay.h) past its checksum: the input
// is taken as replay text, and when it is a JSON object the harness puts the
// right checksum in (tests/fuzz/replay_text.h), so mutations reach every
// field check behind it. Any text gives a replay or one line naming the
// problem, never an exception, a crash or a hang; a replay it accepts is
// valid (validate(), every tape entry within its bound) and writes back to
// text that reads to the same replay.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/verify.h"
#include "sim/params.h"
#include "sim/replay.h"
#include "tests/fuzz/replay_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ringsim::sim;
  const std::string text = ringsim::fuzz::with_right_checksum(std::string(reinterpret_cast<const char*>(data), size));
  ReplayFile replay;
  const std::string problem = replay_from_text(text, replay);
  if (!problem.empty()) {
    VERIFY(problem.find('\n') == std::string::npos);
    return 0;
  }
  VERIFY(validate(replay.config).empty());
  for (const Decision& d : replay.tape) VERIFY(d.bound >= 2 && d.value < d.bound);
  const std::string written = replay_to_text(replay);
  ReplayFile again;
  VERIFY(replay_from_text(written, again).empty());
  VERIFY(replay_to_text(again) == written);
  return 0;
}
