#include "core/record_loop.h"

namespace ringsim::core {

const char* to_string(LoopStatus status) {
  switch (status) {
    case LoopStatus::done: return "done";
    case LoopStatus::stopped: return "stopped";
    case LoopStatus::sink_error: return "output error";
    case LoopStatus::poll_error: return "poll error";
    case LoopStatus::rounds_exhausted: return "round budget exhausted";
  }
  return "unknown";
}

}  // namespace ringsim::core
