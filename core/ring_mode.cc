#include "core/ring_mode.h"

namespace ringsim::core {

const char* to_string(RingMode mode) {
  switch (mode) {
    case RingMode::normal: return "normal";
    case RingMode::backward: return "backward";
    case RingMode::forward_overwrite: return "forward_overwrite";
    case RingMode::backward_writable: return "backward_writable";
  }
  return "unknown";
}

}  // namespace ringsim::core
