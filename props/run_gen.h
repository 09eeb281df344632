// RapidCheck generator of simulation configurations: the campaign's own
// draws (the table of run parameters, sim/params.h) run on RapidCheck's
// source, so the properties explore exactly what the campaign explores and
// every choice shrinks on its own toward its simplest value (fewer CPUs,
// smaller rings, no faults, ...). The seed (which fixes the workload) is
// drawn too.
#pragma once

#include <rapidcheck.h>

#include <algorithm>

#include "sim/params.h"

namespace ringsim::props {

// sim::Draws over RapidCheck: each call is one shrinkable choice, drawn
// over its whole range whatever RapidCheck's current size (which would
// otherwise keep early cases at the low ends: always output=memory, never
// an AUX area), so the distribution is the campaign's.
class RapidCheckDraws : public sim::Draws {
 public:
  std::uint64_t draw(std::uint64_t bound) override {
    RC_ASSERT(bound >= 1);
    return *rc::gen::resize(kFullSize, rc::gen::inRange<std::uint64_t>(0, bound));
  }
  std::uint64_t between(std::uint64_t low, std::uint64_t high) override {
    RC_ASSERT(low <= high);
    RC_ASSERT(high < UINT64_MAX);
    return *rc::gen::resize(kFullSize, rc::gen::inRange<std::uint64_t>(low, high + 1));
  }

 private:
  static constexpr int kFullSize = 100;  // RapidCheck's nominal size: the whole range
};

// `records_max`: the properties' own budget of records per CPU (they run
// many cases); the campaign draws up to 3840.
inline rc::Gen<sim::RunConfig> gen_run_config(std::uint32_t records_max = 1500) {
  return rc::gen::exec([records_max] {
    sim::RunConfig c;
    c.seed = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 48);
    RapidCheckDraws draws;
    sim::draw_config(draws, c);
    c.records_per_cpu = std::min(c.records_per_cpu, records_max);
    RC_ASSERT(sim::validate(c).empty());
    return c;
  });
}

}  // namespace ringsim::props
