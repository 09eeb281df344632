#include "core/ring_mode.h"

namespace ringsim::core {

const char* to_string(RingMode mode) {
  switch (mode) {
    case RingMode::normal: return "normal";
    case RingMode::backward: return "backward";
  }
  return "unknown";
}

}  // namespace ringsim::core
