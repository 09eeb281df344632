// A deterministic CPU workload with known shares, to compare recorders on
// (real/tests/record_features_test.cc): f1, f2, f3 and f4 run the same
// loop for 4, 3, 2 and 1 units per round, so they take 40%, 30%, 20% and
// 10% of its CPU time, whatever the machine's speed. The work is fixed
// (ROUNDS rounds), not the time.
//
//   shares ROUNDS [THREADS]    (each thread runs ROUNDS rounds)
//
// The threads it starts are named "shares-worker" (a sanitizer's runtime
// may add threads of its own).
//
// Built with frame pointers; f1..f4 are extern "C" so that perf shows
// them by those names.
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr std::uint64_t kUnit = 200'000;  // iterations per unit
constexpr long kRoundsMax = 1'000'000;
constexpr long kThreadsMax = 64;

inline std::uint64_t body(std::uint64_t n) {
  std::uint64_t x = 88172645463325252ull;
  for (std::uint64_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    __asm__ volatile("" : "+r"(x));  // the loop is not folded away
  }
  return x;
}

}  // namespace

extern "C" __attribute__((noinline)) std::uint64_t f1(std::uint64_t n) { return body(n); }
extern "C" __attribute__((noinline)) std::uint64_t f2(std::uint64_t n) { return body(n); }
extern "C" __attribute__((noinline)) std::uint64_t f3(std::uint64_t n) { return body(n); }
extern "C" __attribute__((noinline)) std::uint64_t f4(std::uint64_t n) { return body(n); }

namespace {

std::uint64_t run(long rounds) {
  std::uint64_t sink = 0;
  for (long r = 0; r < rounds; r++) sink += f1(4 * kUnit) + f2(3 * kUnit) + f3(2 * kUnit) + f4(kUnit);
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  const long threads = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 1;
  if (argc < 2 || argc > 3 || rounds <= 0 || rounds > kRoundsMax || threads <= 0 || threads > kThreadsMax) {
    std::fprintf(stderr, "usage: shares ROUNDS (1..%ld) [THREADS (1..%ld)]\n", kRoundsMax, kThreadsMax);
    return 2;
  }
  std::vector<std::thread> workers;
  std::vector<std::uint64_t> sinks(static_cast<std::size_t>(threads), 0);
  for (long t = 1; t < threads; t++) {
    workers.emplace_back([&sinks, t, rounds] {
      pthread_setname_np(pthread_self(), "shares-worker");
      sinks[static_cast<std::size_t>(t)] = run(rounds);
    });
  }
  sinks[0] = run(rounds);
  for (std::thread& w : workers) w.join();
  std::uint64_t all = 0;
  for (const std::uint64_t s : sinks) all += s;
  std::printf("shares: %ld rounds x %ld threads (%llx)\n", rounds, threads, static_cast<unsigned long long>(all));
  return 0;
}
