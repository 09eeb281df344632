// Every property a simulation run (or a campaign) checks, in one table:
// its name (as printed in summaries, JSON and replay files), when it is
// checked, and what it means. The oracle, the run, the campaign, the tests
// and docs/campaign.md use these names and nothing else.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace ringsim::model {

// A property that did not hold, and why.
struct Violation {
  std::string property;
  std::string detail;
};

// The oracle's (model/oracle.h), from the kernel's log and the output.
inline constexpr const char* kExactlyOnce = "exactly_once";
inline constexpr const char* kLostAccounting = "lost_accounting";
inline constexpr const char* kNoTornRecords = "no_torn_records";
inline constexpr const char* kGapsGenuine = "gaps_genuine";
inline constexpr const char* kAuxDelivery = "aux_delivery";
inline constexpr const char* kAuxWakeup = "aux_wakeup";
inline constexpr const char* kAuxTruncation = "aux_truncation";
// The simulated kernel's own rules, replayed from its log (model/kernel_rules.h).
inline constexpr const char* kKernelRules = "kernel_rules";
// Which occurrences of a sampling event became samples and the PERIOD they
// carry, replayed from the kernel's log (model/sampling.h).
inline constexpr const char* kSamplingPeriods = "sampling_periods";
// The perf.data files stay sortable: no record after a FINISHED_ROUND is
// older than what a reader flushed at it.
inline constexpr const char* kRoundOrder = "round_order";
// Every counter the campaign prints that has a second, independent count
// (the kernel's log, the oracle, the simulated disk, the sink the consumer
// writes through) agrees with it (model/counters.h, sim/counters.h).
inline constexpr const char* kCountersAgree = "counters_agree";
// The run's (sim/run.h), from the scheduler, the disk, the files and the
// simulated kernel's own checks.
inline constexpr const char* kLiveness = "liveness";
inline constexpr const char* kCleanFinish = "clean_finish";
inline constexpr const char* kReleaseSafety = "release_safety";
inline constexpr const char* kFileValid = "file_valid";
inline constexpr const char* kNoOverlap = "no_overlap";
inline constexpr const char* kBufferStable = "buffer_stable";
inline constexpr const char* kFlushBeforeSwitch = "flush_before_switch";
inline constexpr const char* kHardErrorHandled = "hard_error_handled";
inline constexpr const char* kAuxRefcount = "aux_refcount";
// Staged runs (a staging buffer between a reading and a writing fiber).
inline constexpr const char* kStagingWhole = "staging_whole";
inline constexpr const char* kBackpressureCounted = "backpressure_counted";
// Replays and campaigns.
inline constexpr const char* kReplayFaithful = "replay_faithful";
inline constexpr const char* kDeterminism = "determinism";
// A failed VERIFY inside a run (replay files of crashes).
inline constexpr const char* kCrash = "crash";

struct PropertyInfo {
  const char* name;
  const char* checked_in;
  const char* meaning;
};

inline constexpr std::array<PropertyInfo, 24> kProperties = {{
    {kExactlyOnce, "every run",
     "per CPU, delivered = written, once each, byte-identical, in order, minus reported overwrite gaps"},
    {kLostAccounting, "every run", "LOST counts delivered (+ inside gaps) = reported by the kernel = dropped"},
    {kNoTornRecords, "read-only rings",
     "no delivered record differs from what the kernel wrote there; the reader copied only while output was paused"},
    {kGapsGenuine, "read-only rings", "a reported gap covers only records that were or may have been overwritten"},
    {kAuxDelivery, "runs with AUX", "delivered AUX bytes = written, once each, minus genuine snapshot gaps"},
    {kAuxWakeup, "runs with AUX", "AUX wakeups exactly where the watermark rules say"},
    {kAuxTruncation, "runs with AUX", "a TRUNCATED record woke the consumer and disabled the event"},
    {kAuxRefcount, "runs with AUX", "no writer dropped the last AUX reference or wrote an unmapped area"},
    {kKernelRules, "every run",
     "the simulated kernel followed Linux's rules (capacity, LOST, publishing, wakeups, hangup), replayed from its log"},
    {kSamplingPeriods, "every run",
     "each occurrence of a sampling event was sampled, and each sample carries the PERIOD, as Linux's period and "
     "frequency rules say (perf_swevent_event), replayed from the kernel's log"},
    {kRoundOrder, "output=serial/aio",
     "no record after a FINISHED_ROUND is older than what perf's ordered events flushed at it, unless the kernel "
     "published it after that round began"},
    {kCountersAgree, "every run",
     "each counter the summary prints agrees with its independent count: the kernel's drops and LOST counts with "
     "its logged steps, the consumer's drops, records and writer retries with the oracle's and the disk's counts"},
    {kLiveness, "every run", "no deadlock, within the switch budget, finished within the quiet budget"},
    {kCleanFinish, "every run",
     "the loop ended normally, no ring declared corrupt, nothing left in rings; its drop counts match the oracle's"},
    {kReleaseSafety, "every run",
     "no ring released with a write of it in flight or (in a normal end) data left in it; no reference left"},
    {kFileValid, "output=serial/aio", "every file parses, describes the events, has no hole and ends where its data does"},
    {kNoOverlap, "output=serial/aio", "no two writes in flight overlap; no byte of a data section is written twice"},
    {kBufferStable, "output=serial/aio", "a buffer holds the same bytes from submit to completion"},
    {kFlushBeforeSwitch, "output=serial/aio", "no write in flight when a file is closed or another opened"},
    {kHardErrorHandled, "output=serial/aio", "the writer reports exactly the error the disk injected"},
    {kStagingWhole, "staged runs",
     "every batch the writing fiber takes is whole records (none torn at the staging buffer's end) with the counts "
     "staged; every staged chunk is written or counted as dropped, byte for byte"},
    {kBackpressureCounted, "staged runs",
     "the staging buffer counts every wait of the reading fiber for room (against the waits the scheduler saw)"},
    {kReplayFaithful, "replays", "the run drew exactly the recorded decisions"},
    {kDeterminism, "every Nth seed", "the same seed gave the same trace hash, output hash and decision count"},
}};

// Whether a violation of `property` is a safety failure (anything but
// liveness): it decides the commands' exit status.
inline bool is_safety(const std::string& property) { return property != kLiveness; }

}  // namespace ringsim::model
