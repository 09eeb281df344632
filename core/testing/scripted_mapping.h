// Test double: a core::RingMapping and core::AuxMapping whose control page
// and areas the test sets at will, also between (and, through before_call,
// inside) the reader's calls: head, aux_head, the bytes of both areas, and
// the results of PAUSE_OUTPUT and of enabling the AUX output. The fuzz
// target of the readers (tests/fuzz/ring_reader_fuzz.cc) drives it from its
// input; unit tests replay what the fuzzer found.
//
// It checks the reader's side of the contract (core/backend.h) with
// VERIFY: every copy lies inside its area (which is exactly as large as
// the area, so AddressSanitizer sees a read past it too); a tail moves only
// towards the last head the reader loaded, never past it; aux_tail is
// never stored in snapshot mode; and the reader makes at most calls_max
// calls (an endless loop fails instead of hanging). Each copy is logged with the
// bytes it handed out, so a test can compare what the reader delivered
// with what was in the area at the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "core/backend.h"
#include "core/verify.h"

namespace ringsim::core::testing {

class ScriptedMapping {
 public:
  enum class Call : std::uint8_t {
    load_head,
    store_tail,
    copy_out,
    pause_output,
    load_aux_head,
    store_aux_tail,
    copy_aux,
    set_aux_enabled,
  };

  struct Copy {
    bool aux = false;
    std::uint64_t position = 0;
    std::vector<std::byte> bytes;
  };

  // data_bytes: a power of two, at least 8. aux_bytes: 0 (no AUX area) or a
  // power of two, at least 8.
  ScriptedMapping(std::uint64_t data_bytes, std::uint64_t aux_bytes, bool aux_overwrite)
      : data(data_bytes), aux(aux_bytes), aux_overwrite_(aux_overwrite) {
    VERIFY(data_bytes >= 8 && (data_bytes & (data_bytes - 1)) == 0);
    VERIFY(aux_bytes == 0 || (aux_bytes >= 8 && (aux_bytes & (aux_bytes - 1)) == 0));
  }

  // --- What the kernel side shows; the test changes it at will. ---
  std::uint64_t head = 0;
  std::uint64_t aux_head = 0;
  std::vector<std::byte> data;
  std::vector<std::byte> aux;
  int pause_result = 0;   // 0 or -errno, for every pause_output call
  int enable_result = 0;  // 0 or -errno, for every set_aux_enabled call
  // The PMU disables the AUX event (truncation, a full area).
  void disable_aux_by_pmu() { aux_enabled_ = false; }
  // Runs at the start of every call, before it acts.
  std::function<void(Call)> before_call;
  std::uint64_t calls_max = std::uint64_t{1} << 20;

  // --- What the reader did. ---
  std::uint64_t tail() const { return tail_; }
  std::uint64_t aux_tail() const { return aux_tail_; }
  std::uint64_t loaded_head() const { return loaded_head_; }
  std::uint64_t loaded_aux_head() const { return loaded_aux_head_; }
  bool paused() const { return paused_; }
  bool aux_enabled() const { return aux_enabled_; }
  std::uint64_t calls() const { return calls_; }
  std::vector<Copy> copies;  // since the test last cleared it

  // --- core::RingMapping ---
  std::uint64_t data_size_bytes() const { return data.size(); }
  std::uint64_t load_head() {
    enter(Call::load_head);
    loaded_head_ = head;
    return head;
  }
  void store_tail(std::uint64_t tail) {
    enter(Call::store_tail);
    // Forward rings: up towards the head; write_backward rings: down to it.
    const bool towards_head = tail - tail_ <= loaded_head_ - tail_ || tail_ - tail <= tail_ - loaded_head_;
    VERIFY_MSG(towards_head, "data_tail moved away from, or past, the head the reader loaded");
    tail_ = tail;
  }
  void copy_out(std::uint64_t position, std::span<std::byte> destination) {
    enter(Call::copy_out);
    copy(false, data, position, destination);
  }
  int pause_output(bool paused) {
    enter(Call::pause_output);
    if (pause_result != 0) return pause_result;
    paused_ = paused;
    return 0;
  }

  // --- core::AuxMapping ---
  std::uint64_t aux_size_bytes() const { return aux.size(); }
  bool aux_overwrite() const { return aux_overwrite_; }
  bool aux_offset_heads() const { return false; }
  std::uint32_t aux_cpu() const { return 0; }
  std::uint64_t load_aux_head() {
    enter(Call::load_aux_head);
    loaded_aux_head_ = aux_head;
    return aux_head;
  }
  void store_aux_tail(std::uint64_t tail) {
    enter(Call::store_aux_tail);
    VERIFY_MSG(!aux_overwrite_, "aux_tail stored in snapshot mode");
    VERIFY_MSG(tail - aux_tail_ <= loaded_aux_head_ - aux_tail_,
               "aux_tail moved back or past the aux_head the reader loaded");
    aux_tail_ = tail;
  }
  void copy_aux(std::uint64_t position, std::span<std::byte> destination) {
    enter(Call::copy_aux);
    copy(true, aux, position, destination);
  }
  int set_aux_enabled(bool enabled) {
    enter(Call::set_aux_enabled);
    if (enable_result != 0) return enable_result;
    aux_enabled_ = enabled;
    return 0;
  }

 private:
  void enter(Call call) {
    calls_++;
    VERIFY_MSG(calls_ <= calls_max, "the reader made more calls than any read needs: an endless loop?");
    if (before_call) before_call(call);
  }

  void copy(bool is_aux, const std::vector<std::byte>& area, std::uint64_t position,
            std::span<std::byte> destination) {
    const std::uint64_t index = position & (area.size() - 1);
    VERIFY_MSG(index + destination.size() <= area.size(), "a copy crosses the end of the area");
    if (!destination.empty()) std::memcpy(destination.data(), area.data() + index, destination.size());
    copies.push_back(Copy{is_aux, position, std::vector<std::byte>(destination.begin(), destination.end())});
  }

  const bool aux_overwrite_;
  std::uint64_t tail_ = 0;
  std::uint64_t aux_tail_ = 0;
  std::uint64_t loaded_head_ = 0;
  std::uint64_t loaded_aux_head_ = 0;
  bool paused_ = false;
  bool aux_enabled_ = true;
  std::uint64_t calls_ = 0;
};

static_assert(RingMapping<ScriptedMapping>);
static_assert(AuxMapping<ScriptedMapping>);

}  // namespace ringsim::core::testing
