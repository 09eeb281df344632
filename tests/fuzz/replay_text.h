// For the replay fuzz targets: fuzz input as replay-file text whose checksum
// is right, so the fuzzer gets past the checksum to the fields behind it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ringsim::fuzz {

// If `input` is a JSON object, the same object with "checksum" set to what
// docs/replay-format.md says (XXH3-64 of the compact, key-sorted JSON of the
// object without it), as text; otherwise `input` unchanged.
std::string with_right_checksum(const std::string& input);

}  // namespace ringsim::fuzz
