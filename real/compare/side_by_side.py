#!/usr/bin/env python3
"""perf record and ringsim-record side by side, on the same command line and workload.

    side_by_side.py --record BIN --shares BIN [--fast] [--runs N] [--only TEXT]
                    [--details FILE] [--write-doc DOC | --check-doc DOC]
                    [--self-sampling N [--self-sleep S,...] [--self-who W,...]]

For each case (an option or mode, an event kind) it runs `perf record`
(/usr/bin/perf) and ringsim-record on the same arguments and workload and
compares what a user compares:

  - the exit status;
  - the event attributes (`perf evlist -v`): every field, sample_type and
    read_format flag by flag, the side-band bits over the whole recording;
  - samples per event (`perf script -F event`), medians of several runs,
    within TOLERANCE;
  - `perf report`'s top symbols (share of 15% or more in one recording: 5%
    or more in the other);
  - the fields `perf script -F FIELD` can print;
  - with --call-graph dwarf, how deep perf unwinds: the workload's samples
    with DEPTH_FRAMES user frames or more, their share within
    DEPTH_TOLERANCE of perf's (or more);
  - the output file's mode (perf: 0600), and FILE.old kept when FILE
    existed;
  - hotspot-perfparser's messages beyond those on perf's own file.

Each difference is either one of DIFFERENCES (documented once, here and in
docs/recorder.md, with its reason) or a failure. It prints a markdown table
(option, event kind, perf, ringsim, verdict) and exits 1 if any case
failed. --write-doc puts the tables into docs/recorder.md between its
markers; --check-doc checks that the doc's tables are this code's (every
case, in order, and every documented difference) and that each row this
run produced equals the doc's.

Every recording holds the machine's recording lock
(real/testing/recording_lock.h: flock on /tmp/ringsim-recording.lock).
"""
import argparse
import fcntl
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

PERF = "/usr/bin/perf"
PERFPARSER = "/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser"
LOCK = "/tmp/ringsim-recording.lock"
# Samples per event: medians within 25% of the larger, or 20 samples.
TOLERANCE = 0.25
TOLERANCE_ABS = 20
# Pairs of runs at most: more are run while the medians disagree. Sample
# counts of a short command spread widely run to run (`-d -e page-faults`
# under ASan, 2026-11-27: 18 pairs: perf 38..61, ours 22..59), and
# three pairs once failed CI where neither recorder was wrong.
MAX_PAIRS = 5
# Symbols: one at TOP_SHARE % or more in one recording is at SEEN_SHARE %
# or more in the other (events with MIN_SYMBOL_SAMPLES samples in both).
TOP_SHARE = 15.0
SEEN_SHARE = 5.0
MIN_SYMBOL_SAMPLES = 200
# Unwinding (--call-graph dwarf): the share of the workload's samples with
# DEPTH_FRAMES user frames or more is at least perf's less DEPTH_TOLERANCE
# (events with MIN_DEPTH_SAMPLES samples in perf's file).
DEPTH_FRAMES = 3
DEPTH_TOLERANCE = 0.05
MIN_DEPTH_SAMPLES = 50
# The perf script fields compared (and the sample_type flag each needs).
SCRIPT_FIELDS = {"comm": "TID", "pid": "TID", "tid": "TID", "time": "TIME", "cpu": "CPU", "event": None,
                 "ip": "IP", "sym": "IP", "dso": "IP", "period": "PERIOD", "addr": "ADDR",
                 "data_src": "DATA_SRC", "phys_addr": "PHYS_ADDR", "weight": "WEIGHT_STRUCT", "iregs": "REGS_INTR",
                 "uregs": "REGS_USER"}
SIDEBAND = {"mmap", "mmap2", "comm", "comm_exec", "task", "ksymbol", "bpf_event", "build_id", "mmap_data",
            "context_switch", "namespaces", "cgroup", "text_poke"}
DOC_BEGIN = "<!-- side_by_side: begin (real/compare/side_by_side.py --write-doc) -->"
DOC_END = "<!-- side_by_side: end -->"


@dataclass
class Difference:
    """A documented difference: KEY differs, perf's value matching PERF and ours OURS (None: absent)."""
    id: str
    keys: tuple
    perf: str
    ours: str
    what: str
    why: str
    when: object = None  # a Case -> bool; None: any case

    def matches(self, case, key, perf, ours):
        if self.when is not None and not self.when(case):
            return False
        def fits(pattern, value):
            if pattern == ANY:
                return True
            if pattern is None or value is None:
                return pattern is None and value is None
            return re.fullmatch(pattern, value) is not None
        return key in self.keys and fits(self.perf, perf) and fits(self.ours, ours)


ANY = r".*"
_DIFFERENCES = [
    Difference("D1", ("sample_type.CPU",), None, "1", "ours samples CPU (but with --overwrite and one event)",
               "the read-back counts losses per ring and the data-loss metric needs each sample's CPU; "
               "perf samples it with -a/-C or --sample-cpu only; an overwrite ring has no LOST records"),
    Difference("D2", ("sample_type.IDENTIFIER", "sample_type.ID"), ANY, ANY,
               "ours samples IDENTIFIER (but with --overwrite and one event); perf: none with one event, ID or "
               "IDENTIFIER with several",
               "one sample layout for any number of events (EVENT_DESC ids, LOST per event)"),
    Difference("D3", ("read_format.ID",), "1", None, "perf reads counters with their ID",
               "ours reads each event alone (PERF_FORMAT_LOST), by its file descriptor"),
    Difference("D4", ("use_clockid", "clockid"), None, ANY, "ours stamps CLOCK_MONOTONIC (-k monotonic)",
               "the file's CLOCKID and CLOCK_DATA tie samples to wall-clock time; perf uses perf_clock unless -k"),
    Difference("D5", ("sideband.build_id",), None, "1", "ours asks MMAP2 records with build-ids",
               "perf does with --buildid-mmap only; ours lists and caches build-ids from them (docs: Build-ids)"),
    Difference("D6", ("sideband.ksymbol", "sideband.bpf_event"), "1", None, "perf records BPF/ksymbol events",
               "BPF programs are outside ringsim-record's scope: their samples show as addresses"),
    Difference("D7", ("event.dummy:HG",), "present", None,
               "perf adds a dummy:HG event for side-band records with -a, -C and after a PMU fallback",
               "ours asks the first event for them (one fewer event per CPU); the same records arrive",
               lambda c: c.mode in ("a", "C") or "cycles" in c.args),
    Difference("D8", ("inherit",), "1", None, "perf sets inherit on CPU-wide events (-a, -C)",
               "inherit means nothing for an event on a CPU (pid -1): the kernel follows no task",
               lambda c: c.mode in ("a", "C")),
    Difference("D9", ("name", "precise_ip", "exclude_guest"), ANY, ANY,
               "perf's default event is cycles:P; without a PMU it falls back to cpu-clock:ppp (precise_ip 3), "
               "cpu-clock:pppH when its exclude_guest stays set (VM builds of Linux 6.18.44 differ)",
               "ours defaults to cpu-clock itself (with no PMU, -e cycles falls back to cpu-clock in both)",
               lambda c: "-e" not in c.args),
    Difference("D11", ("status",), "0", "64", "an option perf has and ours refuses with one line naming it",
               "not implemented (docs/recorder.md, perf record's options and ours)"),
    Difference("D12", ("option",), "absent", "present", "an option of ours only: perf runs without it",
               "ringsim-record's own options (--staging, --readers, --reader-priority, --cut-stacks, --header-interval-ms)"),
    Difference("D13", ("files",), ANY, ANY, "--switch-output names files FILE.N (perf: FILE.<timestamp>)",
               "file N is FILE.N so that they sort; counts are summed over each side's files"),
    Difference("D14", ("sample_type.ADDR", "sample_type.DATA_SRC"), "1", None,
               "perf 6.1 with --call-graph dwarf samples ADDR and DATA_SRC",
               "perf's record_opts__parse_callchain turns on sample_address \"for DWARF unwind\"; what unwinding "
               "needs of it is the data mmaps (mmap_data, and the readable mappings synthesized), which ours asks "
               "too since 2026-11-25 (later perf keeps only those); a software event's ADDR and DATA_SRC are 0",
               lambda c: any(a.startswith("dwarf") for a in c.args)),
    Difference("D17", ("status",), r"[1-9]\d*", "64|69",
               "an option ours refuses with one line naming it, and perf refuses here too",
               "perf needs what this machine lacks (a PMU with branch stacks or address filters; -G without -a) "
               "or lost a task it was opening (-u); for branch stacks (-b, -j) the kernel refuses both (69: "
               "not supported here)"),
    Difference("D20", ("status",), r"[1-9]\d*|-11", "0",
               "perf 6.1 -u fails on this machine, ours records the user's every process",
               "a task of the user ends while perf opens its events or reads its /proc maps (\"Ignored open "
               "failure for pid N\", \"couldn't open /proc/1/task/1/maps\", exit 255; with no process of the user "
               "it crashes); ours walks /proc again when a task it was opening ended (perf's "
               "ignore_missing_thread), and leaves itself out",
               lambda c: "-u" in c.args),
    Difference("D16", ("disabled",), None, "1",
               "perf opens its side-band event enabled (\"immediate\") with -a and -C, before it synthesizes "
               "/proc; with -e dummy that is the user's event, with -D its dummy:HG",
               "ours enables every event after synthesizing: a task that starts or maps in between (the time "
               "of the /proc walk) is neither synthesized nor recorded (docs/recorder.md, Limits)",
               lambda c: c.mode in ("a", "C") and ("dummy" in c.args or delayed(c))),
    Difference("D18", ("dummy:HG.freq", "dummy:HG.sample_type.PERIOD", "dummy:HG.{ sample_period, sample_freq }"),
               ANY, ANY,
               "with -D ours' side-band dummy:HG samples as the other events do (-F: freq and PERIOD); perf's "
               "has period 1",
               "one sample layout for every event (the readers take the first event's); a dummy event never "
               "samples, so no sample differs",
               lambda c: delayed(c)),
    Difference("D19", ("sample_type.PERIOD",), "1", None,
               "-c N on a tracepoint: perf keeps PERIOD in the sample (so the kernel samples every event, "
               "whatever N), ours leaves it out as for any event with -c",
               "perf_swevent_event samples each event when the sample has PERIOD and no frequency: ours makes -c "
               "mean what it says (every Nth event); with -c 1 both sample every event",
               lambda c: "-c" in c.args and any(":" in a and a.split(":")[0] in ("sched", "syscalls") for a in c.args)),
    Difference("D21", ("overwrite.sample_bytes",), ANY, ANY,
               "an overwrite ring's snapshot holds as many samples as fit, and the two recorders' samples differ "
               "in size (several events: ours' CPU, D1; -a: perf's IDENTIFIER for its dummy:HG, D7); with "
               "--overwrite the samples are compared by bytes (count x size)",
               "with one event ours samples as perf (since 2026-11-27; before, ours' 56-byte cpu-clock samples "
               "filled a -m 2 snapshot 437 times where perf's 40-byte ones did 611; now 611 and 611)",
               lambda c: "--overwrite" in c.args),
    Difference("D22", ("hotspot",), ANY, r"unhandled event type N\s+PERF_RECORD_(UN)?THROTTLE",
               "hotspot-perfparser does not handle THROTTLE and UNTHROTTLE records, which the kernel writes into "
               "either recorder's rings when it throttles an event",
               "a run has them or not as the kernel throttles (with -a on this machine since 2026-11-27: in two "
               "1 s recordings perf's files had 6 and 9, ours 8 and 6); hotspot says the same of perf's files "
               "that have them"),
    Difference("D23", ("sample_type.TIME",), None, "1",
               "with --per-thread perf samples no TIME (evsel__config: no inherit, no CPU map, no -T)",
               "ours stamps every sample: the data-loss metric, the staging's rounds and perf's ordering of "
               "several rings' records (perf report sorts by time) need it; perf script -F time prints ours",
               lambda c: "--per-thread" in c.args),
    Difference("D24", ("read_format.LOST", "sample_id_all"), None, "1",
               "a weak group the kernel refuses: perf's file has neither PERF_FORMAT_LOST nor sample_id_all",
               "perf 6.1 takes the member's EINVAL for a missing kernel feature first and drops both for the "
               "whole recording (perf record -vv: the opens without them, then \"WARNING: No sample_id_all "
               "support\") before it breaks the group; ours breaks the group at once and keeps them (the kernel "
               "has both: the recording's other opens took them)",
               lambda c: any(a.endswith(":W") for a in c.args)),
    Difference("D15", ("hotspot",), None, r"feature not properly read PerfHeader::CLOCKID N N",
               "hotspot-perfparser does not read the CLOCKID feature, which ours always writes",
               "perf writes it with -k only (D4); hotspot says the same of perf's file with -k, and reads "
               "perf's SAMPLE_TIME, CACHE, ... no better"),
]
DIFFERENCES = sorted(_DIFFERENCES, key=lambda d: int(d.id[1:]))


def delayed(case):
    """-D/--delay: a delay, or -1 (disabled until --control enables): a side-band dummy:HG either way."""
    return any(a == "-D" or a.startswith("--delay") for a in case.args)


@dataclass
class Case:
    option: str          # the cell: what the case shows
    kind: str            # event kind
    args: list           # both recorders' arguments
    mode: str = "cmd"    # cmd, a, C, p, t
    ours_only: list = field(default_factory=list)   # ours only (D12)
    perf_pre: list = field(default_factory=list)    # perf's global options (perf --buildid-dir DIR record)
    ours_pre: list = field(default_factory=list)
    rounds: int = 40     # the shares workload's rounds
    fast: bool = False   # in the Bazel test's subset
    workload: str = "shares"  # or "gzip": Debian's gzip compressing GZIP_INPUT_BYTES (a command case)
    existing: bool = False    # the output file exists before: FILE.old kept
    usr2: tuple = ()          # seconds after the start at which the recorder gets SIGUSR2
    ctl: tuple = ()           # (seconds after the start, command) written to @TMP@/ctl (--control)


# -c per event kind: a sample every 100 us of the clocks, every 10 faults,
# every context switch or migration.
PERIODS = {"cpu-clock": "100000", "task-clock": "100000", "page-faults": "10", "minor-faults": "10"}


def event_cases():
    out = []
    for kind in ("cpu-clock", "task-clock", "page-faults", "minor-faults", "major-faults", "context-switches",
                 "cpu-migrations", "dummy"):
        out.append(Case(f"-e {kind}", kind, ["-e", kind]))
        # Not in the Bazel test's subset: with -a the workload can start
        # while ours walks /proc (D16), unnamed then: f1 0.0% in ours in 1
        # of 5 runs (--runs_per_test=5); slower under ASan and TSan.
        out.append(Case(f"-e {kind} -a", kind, ["-e", kind, "-a"], mode="a"))
        period = PERIODS.get(kind, "1")
        out.append(Case(f"-e {kind} -c {period}", kind, ["-e", kind, "-c", period], fast=kind == "page-faults"))
    return out


def mode_cases():
    return [
        Case("(no -e)", "cpu-clock", [], fast=True),
        Case("-o FILE", "cpu-clock", ["-e", "cpu-clock"]),
        Case("-o FILE (FILE exists)", "cpu-clock", ["-e", "cpu-clock"], existing=True),
        Case("-C 0", "cpu-clock", ["-e", "cpu-clock", "-C", "0"], mode="C"),
        Case("-C 0 -e page-faults", "page-faults", ["-e", "page-faults", "-C", "0"], mode="C"),
        Case("-p PID", "cpu-clock", ["-e", "cpu-clock"], mode="p", fast=True),
        Case("-p PID -e context-switches", "context-switches", ["-e", "context-switches"], mode="p"),
        Case("-t TID", "cpu-clock", ["-e", "cpu-clock"], mode="t"),
        Case("-t TID -e task-clock -c 1000000", "task-clock", ["-e", "task-clock", "-c", "1000000"], mode="t"),
        Case("-e cpu-clock:u", "cpu-clock", ["-e", "cpu-clock:u"]),
        Case("-e cpu-clock:k -a", "cpu-clock", ["-e", "cpu-clock:k", "-a"], mode="a"),
        Case("-e cpu-clock:ppp", "cpu-clock", ["-e", "cpu-clock:ppp"]),
        Case("-e task-clock:H", "task-clock", ["-e", "task-clock:H"]),
        Case("-e software/config=0/", "cpu-clock", ["-e", "software/config=0/"]),
        Case("-e software/config=0/u", "cpu-clock", ["-e", "software/config=0/u"]),
        Case("-e software/config=0,name=foo/u", "cpu-clock", ["-e", "software/config=0,name=foo/u"]),
        Case("-e cpu-clock/period=100000/u", "cpu-clock", ["-e", "cpu-clock/period=100000/u"]),
        Case("--switch-events", "cpu-clock", ["-e", "cpu-clock", "--switch-events"]),
        Case("-e '{cpu-clock,page-faults}:u'", "several", ["-e", "{cpu-clock,page-faults}:u"]),
        Case("-e '{cpu-clock,page-faults}:k'", "several", ["-e", "{cpu-clock,page-faults}:k"]),
        Case("-e '{cpu-clock,page-faults}:S' (leader sampling)", "several", ["-e", "{cpu-clock,page-faults}:S"]),
        Case("-e cpu-clock:S", "cpu-clock", ["-e", "cpu-clock:S"]),
        Case("-e '{cpu-clock,page-faults:D}:W' (a weak group refused)", "several",
             ["-e", "{cpu-clock,page-faults:D}:W"]),
        Case("--group -e cpu-clock,page-faults", "several", ["--group", "-e", "cpu-clock,page-faults"]),
        Case("--all-user", "cpu-clock", ["-e", "cpu-clock", "--all-user"]),
        Case("--all-kernel", "cpu-clock", ["-e", "cpu-clock", "--all-kernel"]),
        Case("-P -c 10 -e page-faults", "page-faults", ["-e", "page-faults", "-P", "-c", "10"]),
        Case("-R", "cpu-clock", ["-e", "cpu-clock", "-R"]),
        Case("--no-buffering", "cpu-clock", ["-e", "cpu-clock", "--no-buffering"]),
        Case("(verbose) -vv", "cpu-clock", ["-e", "cpu-clock", "-vv"]),
        Case("--namespaces", "cpu-clock", ["-e", "cpu-clock", "--namespaces"]),
        Case("--namespaces -a", "cpu-clock", ["-e", "cpu-clock", "--namespaces", "-a"], mode="a"),
        Case("--all-cgroups -a", "cpu-clock", ["-e", "cpu-clock", "--all-cgroups", "-a"], mode="a"),
        Case("-B (--no-buildid)", "cpu-clock", ["-e", "cpu-clock", "-B"]),
        Case("--no-buildid-mmap", "cpu-clock", ["-e", "cpu-clock", "--no-buildid-mmap"]),
        Case("-e software/config=2,period=3/", "page-faults", ["-e", "software/config=2,period=3/"]),
        Case("-e cpu-clock,page-faults,cs", "several", ["-e", "cpu-clock,page-faults,cs"]),
        Case("-e cpu-clock -e minor-faults -a", "several", ["-e", "cpu-clock", "-e", "minor-faults", "-a"], mode="a"),
        Case("-e cycles", "cycles (no PMU)", ["-e", "cycles"], fast=True),
        Case("-e cycles:u", "cycles (no PMU)", ["-e", "cycles:u"]),
        Case("-e sched:sched_switch", "tracepoint", ["-e", "sched:sched_switch"]),
        Case("-e sched:sched_switch -a", "tracepoint", ["-e", "sched:sched_switch", "-a"], mode="a"),
        Case("-e sched:sched_switch -c 1", "tracepoint", ["-e", "sched:sched_switch", "-c", "1"]),
        Case("-e sched:sched_switch:u", "tracepoint", ["-e", "sched:sched_switch:u"]),
        Case("-e 'syscalls:sys_enter_write*',sched:sched_process_exit", "tracepoint",
             ["-e", "syscalls:sys_enter_write*,sched:sched_process_exit"]),
        Case("-e syscalls:sys_enter_write --filter 'count == 2' --filter 'fd == 1'", "tracepoint",
             ["-e", "syscalls:sys_enter_write", "--filter", "count == 2", "--filter", "fd == 1"]),
        Case("-e 'syscalls:sys_enter_*poll*' --exclude-perf -a", "tracepoint",
             ["-e", "syscalls:sys_enter_*poll*", "--exclude-perf", "-a"], mode="a"),
        Case("--no-bpf-event", "cpu-clock", ["-e", "cpu-clock", "--no-bpf-event"]),
        Case("--per-thread", "cpu-clock", ["-e", "cpu-clock", "--per-thread"]),
        Case("--per-thread -p PID", "cpu-clock", ["-e", "cpu-clock", "--per-thread"], mode="p"),
        Case("-F 1000", "cpu-clock", ["-e", "cpu-clock", "-F", "1000"]),
        Case("-F max", "cpu-clock", ["-e", "cpu-clock", "-F", "max"]),
        Case("-F 1000000 (above the maximum)", "cpu-clock", ["-e", "cpu-clock", "-F", "1000000"]),
        Case("-c 10000", "cpu-clock", ["-e", "cpu-clock", "-c", "10000"]),
        Case("-c 1 -e page-faults", "page-faults", ["-e", "page-faults", "-c", "1"]),
        Case("-g", "cpu-clock", ["-e", "cpu-clock", "-g"]),
        Case("-g -a", "cpu-clock", ["-e", "cpu-clock", "-g", "-a"], mode="a"),
        Case("-g -e page-faults", "page-faults", ["-e", "page-faults", "-g"]),
        Case("--call-graph fp", "cpu-clock", ["-e", "cpu-clock", "--call-graph", "fp"]),
        Case("-g --kernel-callchains", "cpu-clock", ["-e", "cpu-clock", "-g", "--kernel-callchains"]),
        Case("-g --user-callchains", "cpu-clock", ["-e", "cpu-clock", "-g", "--user-callchains"]),
        Case("--user-callchains (no -g)", "cpu-clock", ["-e", "cpu-clock", "--user-callchains"]),
        Case("--call-graph dwarf", "cpu-clock", ["-e", "cpu-clock", "--call-graph", "dwarf"], fast=True),
        Case("--call-graph dwarf,4096 -a", "cpu-clock", ["-e", "cpu-clock", "--call-graph", "dwarf,4096", "-a"],
             mode="a"),
        Case("--call-graph dwarf -e minor-faults", "minor-faults", ["-e", "minor-faults", "--call-graph", "dwarf"]),
        Case("--call-graph dwarf -e dummy", "dummy", ["-e", "dummy", "--call-graph", "dwarf"]),
        # Issue 19: a Debian binary (linked with -z separate-code: .eh_frame_hdr
        # in a read-only segment) unwinds as deep as in perf's file.
        Case("--call-graph dwarf (gzip)", "cpu-clock", ["-e", "cpu-clock", "--call-graph", "dwarf"],
             workload="gzip", fast=True),
        Case("-g --call-graph dwarf", "cpu-clock", ["-e", "cpu-clock", "-g", "--call-graph", "dwarf"],
             workload="gzip"),
        Case("-g -c 100 -e context-switches -a", "context-switches",
             ["-e", "context-switches", "-g", "-c", "100", "-a"], mode="a"),
    ]


def output_cases():
    return [
        Case("-m 64", "cpu-clock", ["-e", "cpu-clock", "-m", "64"]),
        Case("-m 1M", "cpu-clock", ["-e", "cpu-clock", "-m", "1M"]),
        Case("-m 8M", "cpu-clock", ["-e", "cpu-clock", "-m", "8M"]),
        Case("--aio", "cpu-clock", ["-e", "cpu-clock", "--aio"]),
        Case("--aio=4 -a", "cpu-clock", ["-e", "cpu-clock", "--aio=4", "-a"], mode="a"),
        Case("-z", "cpu-clock", ["-e", "cpu-clock", "-z"], fast=True),
        Case("--compression-level=3 -g", "cpu-clock", ["-e", "cpu-clock", "--compression-level=3", "-g"]),
        Case("--overwrite", "cpu-clock", ["-e", "cpu-clock", "--overwrite"]),
        Case("--overwrite --sample-identifier", "cpu-clock", ["-e", "cpu-clock", "--overwrite", "--sample-identifier"]),
        Case("--switch-output 64K -g", "cpu-clock", ["-e", "cpu-clock", "-g", "--switch-output=64K"], rounds=80),
        # The flight recorder: two SIGUSR2 while the workload runs (2.5 s), each snapshot a file perf's
        # tools read alone; the workload's samples resolved in each as in perf's (no [unknown] DSO).
        Case("--overwrite --switch-output (2 x SIGUSR2)", "cpu-clock",
             ["-e", "cpu-clock", "-m", "2", "--overwrite", "--switch-output"], rounds=500, usr2=(0.7, 1.4)),
        Case("--switch-output=signal (2 x SIGUSR2)", "cpu-clock", ["-e", "cpu-clock", "--switch-output=signal"],
             rounds=500, usr2=(0.7, 1.4)),
        Case("--switch-output=1s", "cpu-clock", ["-e", "cpu-clock", "--switch-output=1s"], rounds=500),
        Case("--switch-output=1s --switch-max-files=2", "cpu-clock",
             ["-e", "cpu-clock", "--switch-output=1s", "--switch-max-files=2"], rounds=700),
        Case("-r 1", "cpu-clock", ["-e", "cpu-clock", "-r", "1"]),
        Case("-q", "cpu-clock", ["-e", "cpu-clock", "-q"]),
        Case("--buildid-dir DIR", "cpu-clock", ["-e", "cpu-clock"], perf_pre=["--buildid-dir", "@TMP@/cache"],
             ours_pre=["--buildid-dir", "@TMP@/cache"]),
        Case("-N", "cpu-clock", ["-e", "cpu-clock", "-N"]),
        Case("-i", "cpu-clock", ["-e", "cpu-clock", "-i"]),
        Case("--no-inherit", "cpu-clock", ["-e", "cpu-clock", "--no-inherit"]),
        Case("-D 100", "cpu-clock", ["-e", "cpu-clock", "-D", "100"], rounds=80),
        Case("--delay=100 -a", "cpu-clock", ["-e", "cpu-clock", "--delay=100", "-a"], mode="a", rounds=80),
        Case("-k monotonic", "cpu-clock", ["-e", "cpu-clock", "-k", "monotonic"]),
        Case("-k realtime", "cpu-clock", ["-e", "cpu-clock", "-k", "realtime"]),
        Case("-T --sample-cpu", "cpu-clock", ["-e", "cpu-clock", "-T", "--sample-cpu"]),
        Case("--header-interval-ms 10", "cpu-clock", ["-e", "cpu-clock"], ours_only=["--header-interval-ms", "10"]),
        Case("--staging off", "cpu-clock", ["-e", "cpu-clock"], ours_only=["--staging", "off"], fast=True),
        Case("--staging 8M", "cpu-clock", ["-e", "cpu-clock"], ours_only=["--staging", "8M"]),
        Case("--reader-priority nice", "cpu-clock", ["-e", "cpu-clock"], ours_only=["--reader-priority", "nice"]),
        Case("--cut-stacks 1024", "cpu-clock", ["-e", "cpu-clock", "--call-graph", "dwarf"],
             ours_only=["--cut-stacks", "1024"]),
    ]


def sample_field_cases():
    """The sample-field and counting options (perf 6.1's evsel__config), and branch stacks (refused by the
    kernel for a software event, perf and ours alike: D17)."""
    return [
        Case("-d -e page-faults", "page-faults", ["-e", "page-faults", "-d"], fast=True),
        Case("--phys-data -e page-faults", "page-faults", ["-e", "page-faults", "--phys-data"]),
        Case("--data-page-size --code-page-size -e page-faults", "page-faults",
             ["-e", "page-faults", "--data-page-size", "--code-page-size"]),
        Case("--proc-map-timeout 0 -a", "cpu-clock", ["-e", "cpu-clock", "--proc-map-timeout", "0"], mode="a"),
        Case("-W", "cpu-clock", ["-e", "cpu-clock", "-W"]),
        Case("--transaction", "cpu-clock", ["-e", "cpu-clock", "--transaction"]),
        Case("--user-regs=ax,sp", "cpu-clock", ["-e", "cpu-clock", "--user-regs=ax,sp"]),
        Case("--user-regs (bare)", "cpu-clock", ["-e", "cpu-clock", "--user-regs"]),
        Case("-I (bare)", "cpu-clock", ["-e", "cpu-clock", "-I"]),
        Case("--intr-regs=ip,r15", "cpu-clock", ["-e", "cpu-clock", "--intr-regs=ip,r15"]),
        Case("--running-time", "cpu-clock", ["-e", "cpu-clock", "--running-time"]),
        Case("-n (no samples)", "cpu-clock", ["-e", "cpu-clock", "-n"]),
        Case("-s (per-thread counts)", "task-clock", ["-e", "task-clock", "-s"]),
        Case("-b (any branch)", "cpu-clock", ["-e", "cpu-clock", "-b"]),
        Case("-j any_call,u", "cpu-clock", ["-e", "cpu-clock", "-j", "any_call,u"]),
    ]


def control_cases():
    """-D -1 and --control: the events wait for "enable" (written 0.5 s after the start), "disable" and
    "enable" again, "stop" before the workload ends (it gets SIGTERM, and both recorders end by it)."""
    fifo = "fifo:@TMP@/ctl,@TMP@/ack"
    return [
        Case("-D -1", "cpu-clock", ["-e", "cpu-clock", "-D", "-1"]),
        Case("--control fifo:ctl,ack (no command)", "cpu-clock", ["-e", "cpu-clock", "--control", fifo]),
        Case("-D -1 --control fifo:ctl,ack (enable at 0.5 s)", "cpu-clock",
             ["-e", "cpu-clock", "-D", "-1", "--control", fifo], rounds=300, ctl=((0.5, "enable"),)),
        Case("--control (disable at 0.3 s, enable at 0.6 s, stop at 1 s)", "cpu-clock",
             ["-e", "cpu-clock", "--control", fifo], rounds=1000,
             ctl=((0.3, "disable"), (0.6, "enable"), (1.0, "stop"))),
        Case("-u root", "cpu-clock", ["-e", "cpu-clock", "-u", "root"]),
        # The root cgroup: every task (a cgroup event counts its descendants' tasks too).
        Case("-G / -a", "cpu-clock", ["-e", "cpu-clock", "-G", "/", "-a"], mode="a"),
    ]


# perf record's options that ringsim-record refuses with one line (D11),
# with a value where they take one.
REFUSED = [["-G", "/"], ["--filter", "0x0"],
           ["-B"], ["--buildid-all"], ["--namespaces"],
           ["--timestamp-filename"]]
# (Some of them are implemented since: their rows say what both record.)


def refused_cases():
    return [Case(" ".join(a), "cpu-clock", ["-e", "cpu-clock"] + a) for a in REFUSED]


def all_cases():
    return event_cases() + mode_cases() + output_cases() + sample_field_cases() + control_cases() + refused_cases()


# ---------------------------------------------------------------- running

class RecordingLock:
    """The machine's recording lock, for a with-block (bounded wait: 600 s, then on without it)."""

    def __enter__(self):
        self.fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        for _ in range(600 * 50):
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                time.sleep(0.02)
        print(f"side_by_side: {LOCK} still held after 600 s; going ahead without it", file=sys.stderr)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        time.sleep(0.06)  # as recording_lock.cc: let waiting test processes in


def run(argv, timeout=120, **kw):
    try:
        return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, -999, e.stdout or "", (e.stderr or "") + "\nTIMED OUT")


def run_signalled(argv, usr2, timeout=120, ctl=(), ctl_path=""):
    """run(), with SIGUSR2 sent to the recorder at each of the times `usr2` (seconds after its start), and
    each (time, command) of `ctl` written as a line to the FIFO ctl_path (--control)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    started = time.monotonic()
    for at, command in sorted([(t, None) for t in usr2] + list(ctl)):
        time.sleep(max(0.0, started + at - time.monotonic()))
        if p.poll() is not None:
            continue
        if command is None:
            p.send_signal(signal.SIGUSR2)
            continue
        # The recorder holds the FIFO open (O_RDWR): this open does not wait.
        fd = os.open(ctl_path, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, (command + "\n").encode())
        os.close(fd)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        err += "\nTIMED OUT"
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


@dataclass
class Side:
    """One recorder's run of a case, and what perf's tools see in its files."""
    status: int = -1
    err: str = ""
    files: list = field(default_factory=list)
    events: list = field(default_factory=list)     # [(name, {key: value})]
    samples: dict = field(default_factory=dict)     # event name -> count
    symbols: dict = field(default_factory=dict)     # event name -> {symbol: percent}
    fields: dict = field(default_factory=dict)      # perf script field -> printable
    messages: list = field(default_factory=list)    # hotspot-perfparser's
    problems: list = field(default_factory=list)    # perf's tools failing on the file
    modes: list = field(default_factory=list)       # the files' modes ("0o600")
    old: object = None                              # FILE.old holds what FILE held (existing cases)
    depth: tuple = (0, 0)                           # dwarf: (samples with DEPTH_FRAMES user frames, samples)
    unresolved: list = field(default_factory=list)  # rotating: per file, (the workload's user samples, no DSO)


GZIP = "/usr/bin/gzip"
GZIP_INPUT_BYTES = 12 << 20


def gzip_input(tmp):
    """GZIP_INPUT_BYTES that do not compress (fixed seed): about half a second of gzip -6."""
    path = os.path.join(tmp, "input.bin")
    if not os.path.exists(path):
        import random
        with open(path, "wb") as f:
            f.write(random.Random(19).randbytes(GZIP_INPUT_BYTES))
    return path


def workload_comm(case):
    return "gzip" if case.workload == "gzip" else "shares"


class Workload:
    """The shares workload as the case's command, or running beside it for -p/-t; or gzip."""

    def __init__(self, ctx, case, tmp):
        self.ctx, self.case, self.tmp, self.proc = ctx, case, tmp, None

    def __enter__(self):
        if self.case.mode in ("p", "t"):
            self.proc = subprocess.Popen([self.ctx.shares, "1000000", "2"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while len(os.listdir(f"/proc/{self.proc.pid}/task")) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
        return self

    def target(self):
        """The options naming the target and the command after --."""
        if self.case.mode == "p":
            return ["-p", str(self.proc.pid)], ["sleep", "0.3"]
        if self.case.mode == "t":
            tids = sorted(int(t) for t in os.listdir(f"/proc/{self.proc.pid}/task") if int(t) != self.proc.pid)
            return ["-t", str(tids[0])], ["sleep", "0.3"]
        if self.case.mode == "C":  # the workload on the CPU recorded
            return [], ["taskset", "-c", "0", self.ctx.shares, str(self.case.rounds)]
        if self.case.workload == "gzip":
            return [], ["/bin/sh", "-c", f"exec {GZIP} -c -6 {gzip_input(self.tmp)} > /dev/null"]
        return [], [self.ctx.shares, str(self.case.rounds)]

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


def substitute(args, tmp):
    return [a.replace("@TMP@", tmp) for a in args]


def record(ctx, case, who, tmp):
    """Runs one recorder on the case; its status, stderr and files."""
    out = os.path.join(tmp, f"{who}.data")
    if case.existing:
        with open(out, "w") as f:
            f.write("an earlier recording\n")
    with Workload(ctx, case, tmp) as work:
        target, command = work.target()
        if who == "perf":
            argv = [PERF] + case.perf_pre + ["record", "-o", out] + case.args + target + ["--"] + command
        else:
            argv = [ctx.record] + case.ours_pre + ["-o", out] + case.args + case.ours_only + target + ["--"] + command
        with RecordingLock():
            if case.usr2 or case.ctl:
                r = run_signalled(substitute(argv, tmp), case.usr2, ctl=case.ctl, ctl_path=os.path.join(tmp, "ctl"))
            else:
                r = run(substitute(argv, tmp))
    side = Side(status=r.returncode, err=r.stderr)
    side.files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.startswith(f"{who}.data")
                        and not f.endswith(".old"))
    side.modes = sorted({oct(os.stat(f).st_mode & 0o777) for f in side.files})
    if case.existing:
        side.old = os.path.exists(out + ".old") and open(out + ".old").read() == "an earlier recording\n"
    return side


def parse_evlist(text):
    """perf evlist -v: [(name, {key: value})], sample_type and read_format split into flags."""
    events = []
    for line in text.splitlines():
        if ": type: " not in line:
            continue
        name, rest = line.split(": type: ", 1)
        attrs = {}
        for key, value in re.findall(r"(\{[^}]*\}|[\w.]+): ([^,]*)(?:, |$)", "type: " + rest):
            if key in ("sample_type", "read_format"):
                for flag in value.split("|"):
                    attrs[f"{key}.{flag}"] = "1"
            else:
                attrs[key] = value
        events.append((name, attrs))
    return events


def count_events(files, comm):
    """Samples per event name in perf script's output; only comm's when given."""
    counts = {}
    for f in files:
        for line in run([PERF, "script", "-i", f, "-F", "comm,event"]).stdout.splitlines():
            parts = line.strip().rsplit(" ", 1)
            if len(parts) != 2 or not parts[1].endswith(":") or (comm and parts[0].strip() != comm):
                continue
            name = parts[1][:-1]
            counts[name] = counts.get(name, 0) + 1
    return counts


def symbol_shares(files, perf_pre, comm):
    """perf report's symbol shares per event (the first file's), of comm's samples only when given."""
    r = run([PERF] + perf_pre + ["report", "--stdio", "--no-children", "-g", "none", "--sort", "sym", "-i", files[0]]
            + (["--comms", comm] if comm else []))
    out, event = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"# Samples: .* of event '(.*)'", line)
        if m:
            event = m.group(1)
            out[event] = {}
            continue
        m = re.match(r"\s+([\d.]+)%\s+\[.\]\s+(.*\S)", line)
        if event is not None and m:
            out[event][m.group(2)] = float(m.group(1))
    return out


def printable_fields(path, comm):
    """Which SCRIPT_FIELDS perf script prints: all at once, leaving out each one it cannot print.
    None for every field when perf script fails otherwise (a timeout, a crash)."""
    ok = {f: True for f in SCRIPT_FIELDS}
    for _ in range(len(SCRIPT_FIELDS)):
        asked = [f for f in SCRIPT_FIELDS if ok[f]]
        r = run([PERF, "script", "-i", path, "-F", ",".join(asked)] + (["--comms", comm] if comm else []))
        m = re.search(r"Cannot print '(\w+)' field", r.stderr)
        if r.returncode == 0:
            return ok
        if m is None or m.group(1) not in asked:
            return {f: None for f in SCRIPT_FIELDS}
        ok[m.group(1)] = False
    return ok


def unwind_depth(files, comm):
    """perf script's call chains of comm's samples: (those with DEPTH_FRAMES user frames or more, all).
    A sample is a line, then its frames one per line (tab-indented) up to an empty line; a user
    frame's address is below the kernel's (0xffff...); "(inlined)" lines repeat their frame's."""
    deep, samples = 0, 0
    for f in files:
        text = run([PERF, "script", "-i", f, "--comms", comm]).stdout
        for block in text.split("\n\n"):
            lines = [l for l in block.split("\n") if l.strip()]
            if not lines or lines[0].startswith("\t"):
                continue
            frames = [l.split() for l in lines[1:] if l.startswith("\t") and "(inlined)" not in l]
            user = sum(1 for f_ in frames if f_ and not f_[0].startswith("ffffffff"))
            samples += 1
            deep += user >= DEPTH_FRAMES
    return deep, samples


def perfparser_messages(path):
    if not os.access(PERFPARSER, os.X_OK):
        return []
    r = run([PERFPARSER, "--input", path, "--print-stats"])
    out = []
    for line in r.stderr.splitlines():
        if not line.strip() or "Switching to automatic buffering" in line:
            continue
        # Pointers and figures (a compression ratio, a size) differ from file to file.
        out.append(re.sub(r"\d+", "N", re.sub(r"0x[0-9a-fA-F]+", "0x?", line)))
    return out


def analyse(side, case, perf_pre, full):
    """What perf's tools see in a recording. full: also fields and hotspot (the first run).
    -a and -C: the workload's samples only (comm shares), the rest is the machine's other load."""
    if side.status != 0 or not side.files:
        return side
    ev = run([PERF] + perf_pre + ["evlist", "-v", "-i", side.files[0]])
    if ev.returncode != 0:
        side.problems.append(f"perf evlist exit {ev.returncode}: {first_line(ev.stderr)}")
    side.events = parse_evlist(ev.stdout)
    comm = "shares" if case.mode in ("a", "C") else ""
    side.samples = count_events(side.files, comm)
    side.symbols = symbol_shares(side.files, perf_pre, comm)
    if dwarf(case):
        side.depth = unwind_depth(side.files, workload_comm(case))
    if rotating(case):
        side.unresolved = [unresolved_samples(f, workload_comm(case)) for f in side.files]
    if full:
        side.fields = printable_fields(side.files[0], comm)
        side.messages = perfparser_messages(side.files[0])
    return side


def rotating(case):
    return any(a.startswith("--switch-output") or a == "--overwrite" for a in case.args)


def unresolved_samples(path, comm):
    """(comm's user-space samples in the file, those perf maps to no DSO: "([unknown])")."""
    samples, unknown = 0, 0
    for line in run([PERF, "script", "-i", path, "-F", "comm,ip,dso", "--comms", comm]).stdout.splitlines():
        if not line.strip() or "[kernel.kallsyms]" in line:
            continue
        samples += 1
        unknown += "([unknown])" in line
    return samples, unknown


def dwarf(case):
    return any(a.startswith("dwarf") for a in case.args)


def first_line(text, needle=""):
    for line in text.splitlines():
        if line.strip() and needle in line:
            return line.strip()
    return ""


# ---------------------------------------------------------------- comparing

@dataclass
class Verdict:
    documented: list = field(default_factory=list)  # difference ids
    failures: list = field(default_factory=list)
    flags: dict = field(default_factory=dict)       # sample_type flag -> the id that covers its difference
    figures: list = field(default_factory=list)     # per event: (name, perf counts, ours counts)
    depth: tuple = ()                               # dwarf: ([deep, samples] perf, [deep, samples] ours)

    def covered(self, case, key, perf, ours):
        return any(d.matches(case, key, perf, ours) for d in DIFFERENCES)

    def differ(self, case, key, perf, ours):
        for d in DIFFERENCES:
            if d.matches(case, key, perf, ours):
                if d.id not in self.documented:
                    self.documented.append(d.id)
                if key.startswith("sample_type."):
                    self.flags[key[len("sample_type."):]] = d.id
                return
        self.failures.append(f"{key}: perf {perf}, ours {ours}")


def error_line(side):
    """The error line; after perf's bare "Error:", the line that follows it (perf's message)."""
    line = first_line(side.err, "rror") or first_line(side.err)
    if line == "Error:":
        lines = [l.strip() for l in side.err.splitlines() if l.strip()]
        at = lines.index("Error:")
        return lines[at + 1] if at + 1 < len(lines) else line
    return line


def compare_status(case, perf, ours, v):
    if case.ours_only:
        v.differ(case, "option", "absent", "present")
    if perf.status == ours.status:
        return perf.status == 0
    v.differ(case, "status", str(perf.status), str(ours.status))
    if ours.status != 0:
        errors = [l for l in ours.err.splitlines() if "error" in l]
        named = "cycles" if "cycles" in case.args else next(
            (a.split("=")[0] for a in case.args[2:] if a.startswith("-")), case.args[-1])
        if len(errors) != 1 or named not in errors[0]:
            v.failures.append(f"ours refuses without one line naming {named}: {errors}")
    return False


def file_forms(side):
    """How a recorder names its files: "" (the -o name), ".N", ".TIMESTAMP" suffixes."""
    forms = set()
    for f in side.files:
        suffix = os.path.basename(f).split(".data", 1)[1]
        forms.add(re.sub(r"^\.\d{14,}$", ".TIMESTAMP", re.sub(r"^\.\d{1,6}$", ".N", suffix)))
    return ", ".join(sorted(forms))


def compare_files(case, perf, ours, v):
    pf, of = file_forms(perf), file_forms(ours)
    if pf != of:
        v.differ(case, "files", pf, of)
    if perf.modes != ours.modes:
        v.failures.append(f"file mode: perf {', '.join(perf.modes)}, ours {', '.join(ours.modes)}")
    if perf.old != ours.old:
        v.failures.append(f"FILE.old kept: perf {perf.old}, ours {ours.old}")


def compare_resolution(case, perf, ours, v):
    """Rotating: every file resolves the workload's samples on its own where perf's files do."""
    if not rotating(case):
        return
    pu = sum(u for _, u in perf.unresolved)
    ou = sum(u for _, u in ours.unresolved)
    print(f"  {case.option}: the workload's user samples with no DSO per file: perf "
          f"{[list(x) for x in perf.unresolved]}, ours {[list(x) for x in ours.unresolved]}", file=sys.stderr)
    if ou > 0 and pu == 0:
        v.failures.append(f"unresolved: the workload's samples with no DSO: perf 0 in {len(perf.files)} files, "
                          f"ours {ou} in {len(ours.files)} files")


def compare_depth(case, perf_runs, ours_runs, v):
    """dwarf: ours unwinds as deep as perf (the share of samples with DEPTH_FRAMES user frames)."""
    if not dwarf(case):
        return
    pd = [sum(r.depth[i] for r in perf_runs) for i in (0, 1)]
    od = [sum(r.depth[i] for r in ours_runs) for i in (0, 1)]
    v.depth = (pd, od)
    if pd[1] < MIN_DEPTH_SAMPLES:
        return
    if od[1] == 0 or od[0] / od[1] < pd[0] / pd[1] - DEPTH_TOLERANCE:
        v.failures.append(f"unwinding: samples with >= {DEPTH_FRAMES} user frames: perf {pd[0]} of {pd[1]}, "
                          f"ours {od[0]} of {od[1]}")


def sideband(events):
    return {k: "1" for _, attrs in events for k in attrs if k in SIDEBAND}


def compare_attrs(case, perf, ours, v):
    """The events' attributes pair by pair; the side-band dummy:HG (perf's tracking event; ours with -D
    too, first where perf's is last) compared with its counterpart."""
    perf_events = [e for e in perf.events if e[0] != "dummy:HG"]
    ours_events = [e for e in ours.events if e[0] != "dummy:HG"]
    perf_dummy = [e for e in perf.events if e[0] == "dummy:HG"]
    ours_dummy = [e for e in ours.events if e[0] == "dummy:HG"]
    if len(perf_dummy) != len(ours_dummy):
        v.differ(case, "event.dummy:HG", "present" if perf_dummy else None, "present" if ours_dummy else None)
    elif perf_dummy:
        pa, oa = perf_dummy[0][1], ours_dummy[0][1]
        for k in sorted((set(pa) | set(oa)) - SIDEBAND):
            if pa.get(k) != oa.get(k):
                # A difference every event has (D1, D3, D4, ...), or the dummy's own.
                key = k if v.covered(case, k, pa.get(k), oa.get(k)) else "dummy:HG." + k
                v.differ(case, key, pa.get(k), oa.get(k))
    pb, ob = sideband(perf.events), sideband(ours.events)
    for k in sorted(set(pb) | set(ob)):
        if pb.get(k) != ob.get(k):
            v.differ(case, f"sideband.{k}", pb.get(k), ob.get(k))
    if len(perf_events) != len(ours_events):
        v.failures.append(f"events: perf {[e[0] for e in perf_events]}, ours {[e[0] for e in ours_events]}")
        return []
    for (pn, pa), (on, oa) in zip(perf_events, ours_events):
        if pn != on:
            v.differ(case, "name", pn, on)
        for k in sorted((set(pa) | set(oa)) - SIDEBAND):
            if pa.get(k) != oa.get(k):
                v.differ(case, k, pa.get(k), oa.get(k))
    return list(zip([e[0] for e in perf_events], [e[0] for e in ours_events]))


def compare_views(case, perf, ours, v):
    for f, flag in SCRIPT_FIELDS.items():
        if perf.fields.get(f) is None and ours.fields.get(f) is not None:
            continue  # perf script failed on perf's own file: nothing to compare
        if perf.fields.get(f) != ours.fields.get(f) and flag not in v.flags:
            v.failures.append(f"perf script -F {f}: perf {'prints' if perf.fields.get(f) else 'cannot'}, "
                              f"ours {'prints' if ours.fields.get(f) else 'cannot'}")
    for m in ours.messages:
        if m not in perf.messages:
            v.differ(case, "hotspot", None, m)
    for p in perf.problems + ours.problems:
        v.failures.append(p)


def within(a, b):
    return abs(a - b) <= max(TOLERANCE * max(a, b), TOLERANCE_ABS)


# Bytes of a sample of fixed size by sample_type flag (the u64 fields;
# TID and CPU are two u32 each); None for a flag that makes the size vary.
FIXED_SAMPLE_FIELDS = {"IP", "TID", "TIME", "ADDR", "ID", "STREAM_ID", "CPU", "PERIOD", "IDENTIFIER", "DATA_SRC",
                       "PHYS_ADDR", "CGROUP", "WEIGHT", "TRANSACTION", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE"}


def sample_bytes(attrs):
    """A sample's size from its event's sample_type flags, or None if it varies (callchain, RAW, ...)."""
    flags = [k.split(".", 1)[1] for k, value in attrs.items() if k.startswith("sample_type.") and value == "1"]
    if any(f not in FIXED_SAMPLE_FIELDS for f in flags):
        return None
    return 8 + 8 * len(flags)


def overwrite_scale(case, pairs, perf, ours, v):
    """--overwrite: {ours' event: (perf's sample bytes, ours')} where both are fixed (D21)."""
    if "--overwrite" not in case.args:
        return {}
    pe, oe = dict(perf.events), dict(ours.events)
    scale = {}
    for pn, on in pairs:
        pb, ob = sample_bytes(pe.get(pn, {})), sample_bytes(oe.get(on, {}))
        if pb is not None and ob is not None and pb != ob:
            scale[on] = (pb, ob)
            v.differ(case, "overwrite.sample_bytes", str(pb), str(ob))
    return scale


def compare_counts(pairs, perf_runs, ours_runs, v, final, scale=None):
    """Medians per event within the tolerance (by bytes for the events in scale: D21); on `final`,
    failures and figures are recorded."""
    ok = True
    for pn, on in pairs:
        pc = [r.samples.get(pn, 0) for r in perf_runs]
        oc = [r.samples.get(on, 0) for r in ours_runs]
        pb, ob = (scale or {}).get(on, (1, 1))
        good = within(statistics.median(pc) * pb, statistics.median(oc) * ob)
        ok = ok and good
        if final:
            v.figures.append((on, pc, oc))
            if not good:
                by = f", by bytes: samples of {pb} and {ob} bytes" if (pb, ob) != (1, 1) else ""
                v.failures.append(f"samples of {on}: perf {pc}, ours {oc} (medians beyond {TOLERANCE:.0%}{by})")
    return ok


def mean_shares(runs, name):
    total = {}
    for r in runs:
        for sym, pct in r.symbols.get(name, {}).items():
            total[sym] = total.get(sym, 0) + pct / len(runs)
    return total


def compare_symbols(pairs, perf_runs, ours_runs, v):
    for pn, on in pairs:
        if min(statistics.median([r.samples.get(pn, 0) for r in perf_runs]),
               statistics.median([r.samples.get(on, 0) for r in ours_runs])) < MIN_SYMBOL_SAMPLES:
            continue
        ps, os_ = mean_shares(perf_runs, pn), mean_shares(ours_runs, on)
        for mine, other, who in ((ps, os_, "perf"), (os_, ps, "ours")):
            for sym, pct in mine.items():
                if pct >= TOP_SHARE and other.get(sym, 0) < SEEN_SHARE:
                    v.failures.append(f"perf report {on}: {sym} {pct:.1f}% in {who}'s, "
                                      f"{other.get(sym, 0):.1f}% in the other")


# ---------------------------------------------------------------- cases and tables

@dataclass
class Context:
    record: str
    shares: str
    runs: int
    fast: bool


def run_pair(ctx, case, full):
    tmp = tempfile.mkdtemp(prefix="side_by_side-")
    try:
        os.makedirs(os.path.join(tmp, "cache"), exist_ok=True)
        if "--control" in case.args:
            os.mkfifo(os.path.join(tmp, "ctl"))
            os.mkfifo(os.path.join(tmp, "ack"))
        perf = analyse(record(ctx, case, "perf", tmp), case, substitute(case.perf_pre, tmp), full)
        ours = analyse(record(ctx, case, "ours", tmp), case, substitute(case.perf_pre, tmp), full)
        return perf, ours
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cell(side):
    if side.status == 0:
        return "records " + ", ".join(f"`{n}`" for n, _ in side.events)
    line = error_line(side).replace("ringsim-record: error: ", "")
    line = re.sub(r"/tmp/side_by_side-\w+", "TMP", line)
    line = re.sub(r"pid \d+", "pid PID", line)
    line = re.sub(r"\(see --help\)|\(docs/recorder.md: the perf option table says why\)", "", line).strip()
    return f"exit {side.status}" + (f": `{line[:90]}`" if line else "")


def run_case(ctx, case):
    """The case's row: (perf cell, ours cell, verdict text, Verdict)."""
    v = Verdict()
    perf, ours = run_pair(ctx, case, full=True)
    perf_runs, ours_runs = [perf], [ours]
    if compare_status(case, perf, ours, v):
        compare_files(case, perf, ours, v)
        compare_resolution(case, perf, ours, v)
        pairs = compare_attrs(case, perf, ours, v)
        compare_views(case, perf, ours, v)
        scale = overwrite_scale(case, pairs, perf, ours, v)
        want = 1 if ctx.fast else ctx.runs
        while len(perf_runs) < MAX_PAIRS and (len(perf_runs) < want or
                                      not compare_counts(pairs, perf_runs, ours_runs, v, final=False, scale=scale)):
            p, o = run_pair(ctx, case, full=False)
            perf_runs.append(p)
            ours_runs.append(o)
        compare_counts(pairs, perf_runs, ours_runs, v, final=True, scale=scale)
        compare_symbols(pairs, perf_runs, ours_runs, v)
        compare_depth(case, perf_runs, ours_runs, v)
    if v.failures:
        verdict = "FAIL: " + "; ".join(v.failures)
    elif v.documented:
        verdict = "documented: " + ", ".join(sorted(v.documented, key=lambda d: int(d[1:])))
    else:
        verdict = "same"
    return cell(perf), cell(ours), verdict, v


def row(case, perf_cell, ours_cell, verdict):
    return f"| `{case.option}` | {case.kind} | {perf_cell} | {ours_cell} | {verdict} |"


TABLE_HEAD = ["| option | event kind | perf | ringsim | verdict |", "| --- | --- | --- | --- | --- |"]


def differences_table():
    lines = ["| id | difference | why |", "| --- | --- | --- |"]
    for d in DIFFERENCES:
        lines.append(f"| {d.id} | {d.what} | {d.why} |")
    return lines


def doc_block(rows):
    return [DOC_BEGIN, ""] + differences_table() + [""] + TABLE_HEAD + rows + ["", DOC_END]


def read_doc_block(path):
    text = open(path).read()
    if DOC_BEGIN not in text or DOC_END not in text:
        return None, text
    start, end = text.index(DOC_BEGIN), text.index(DOC_END) + len(DOC_END)
    return text[start:end].split("\n"), text


def write_doc(path, rows):
    """The whole block; with some cases only (--only), their rows replace the doc's."""
    block, text = read_doc_block(path)
    if block is None:
        sys.exit(f"side_by_side: {path} has no {DOC_BEGIN} ... {DOC_END} block")
    keys = [row_key(row(c, "", "", "")) for c in all_cases()]
    old = {row_key(r): r for r in block if r.startswith("| `")}
    # A doc row that lists this run's cells among its alternatives stays as it is.
    rows = [old[row_key(r)] if row_matches(old.get(row_key(r), ""), r) else r for r in rows]
    if len(rows) < len(keys):
        old.update({row_key(r): r for r in rows})
        rows = [old[k] for k in keys if k in old]
    start, end = text.index(DOC_BEGIN), text.index(DOC_END) + len(DOC_END)
    with open(path, "w") as f:
        f.write(text[:start] + "\n".join(doc_block(rows)) + text[end:])


def check_doc(path, produced):
    """Problems: the doc's block against this code's cases and differences, and the rows produced."""
    block, _ = read_doc_block(path)
    if block is None:
        return [f"{path}: no side-by-side block ({DOC_BEGIN})"]
    problems = []
    diffs = differences_table()
    if block[2:2 + len(diffs)] != diffs:
        problems.append("the documented differences table is not DIFFERENCES (run scripts/side-by-side.sh)")
    rows = [l for l in block[4 + len(diffs):] if l.startswith("| `")]
    keys = [row_key(row(c, "", "", "")) for c in all_cases()]
    if [row_key(r) for r in rows] != keys:
        problems.append(f"the doc's cases are not the harness's ({len(rows)} rows, {len(keys)} cases)")
    for r in produced:
        if not any(row_matches(d, r) for d in rows):
            problems.append(f"this run's row is not the doc's: {r}")
    return problems


def row_key(r):
    """A table row's option and event kind: which case it is."""
    return tuple(r.split(" | ")[:2])


# A doc cell may list the renderings seen on different machines, separated
# by this: perf names its default event cpu-clock:ppp on one VM build of
# Linux 6.18.44 and cpu-clock:pppH on another (D9).
ALTERNATIVES = " / "


def row_matches(doc_row, produced):
    """True if each cell of the produced row is the doc row's cell or one of its alternatives."""
    d, p = doc_row.split(" | "), produced.split(" | ")
    return len(d) == len(p) and all(pc == dc or pc in dc.split(ALTERNATIVES) for dc, pc in zip(d, p))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--record", required=True)
    ap.add_argument("--shares", required=True)
    ap.add_argument("--fast", action="store_true", help="the Bazel test's subset, one run unless counts differ")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="cases whose option contains this text")
    ap.add_argument("--details", default="", help="write the sample counts of every run here")
    ap.add_argument("--write-doc", default="")
    ap.add_argument("--check-doc", default="")
    ap.add_argument("--self-sampling", type=int, default=0, metavar="RUNS")
    ap.add_argument("--self-sleep", default="1", metavar="S,...",
                    help="with --self-sampling: the recorded command's lengths (sleep S), each measured in turn")
    ap.add_argument("--self-who", default="perf,ours,ours-1s", metavar="W,...",
                    help="with --self-sampling: the recorders, of perf, ours (its default: 10 s), ours-100ms, ours-1s")
    a = ap.parse_args()
    if not os.access(PERF, os.X_OK):
        print(f"side_by_side: SKIPPED: {PERF} not found (install linux-perf)")
        return 0
    ctx = Context(os.path.abspath(a.record), os.path.abspath(a.shares), a.runs, a.fast)
    if a.self_sampling:
        who = a.self_who.split(",")
        if not who or any(w not in SELF_WHO for w in who):
            print(f"side_by_side: error: --self-who takes some of {','.join(SELF_WHO)}, not {a.self_who}")
            return 64
        try:
            sleeps = [float(x) for x in a.self_sleep.split(",")]
        except ValueError:
            sleeps = []
        if not sleeps or any(not 0 < x <= 60 for x in sleeps):
            print(f"side_by_side: error: --self-sleep takes seconds in (0, 60], comma-separated, not {a.self_sleep}")
            return 64
        return self_sampling(ctx, a.self_sampling, sleeps, who)
    cases = [c for c in all_cases() if (c.fast or not a.fast) and a.only in c.option]
    print("\n".join(TABLE_HEAD), flush=True)
    rows, details, failed = [], [], 0
    for c in cases:
        started = time.monotonic()
        perf_cell, ours_cell, verdict, v = run_case(ctx, c)
        rows.append(row(c, perf_cell, ours_cell, verdict))
        failed += bool(v.failures)
        print(rows[-1], flush=True)
        for name, pc, oc in v.figures:
            details.append(f"| `{c.option}` | {name} | {' '.join(map(str, pc))} | {' '.join(map(str, oc))} |")
        depth = ""
        if v.depth:
            (pd, od) = v.depth
            depth = (f"; samples of {workload_comm(c)} with >= {DEPTH_FRAMES} user frames: perf {pd[0]} of {pd[1]}, "
                     f"ours {od[0]} of {od[1]}")
            details.append(f"| `{c.option}` | >= {DEPTH_FRAMES} user frames | {pd[0]} of {pd[1]} | "
                           f"{od[0]} of {od[1]} |")
        print(f"  ({time.monotonic() - started:.1f} s; samples perf/ours: "
              f"{'; '.join(f'{n} {pc}/{oc}' for n, pc, oc in v.figures)}{depth})", file=sys.stderr, flush=True)
    print(f"\n{len(cases)} cases, {failed} failed", flush=True)
    if a.details:
        with open(a.details, "w") as f:
            f.write("\n".join(["| case | event | perf samples per run | ours per run |", "| --- | --- | --- | --- |"]
                              + details) + "\n")
    if a.write_doc and not a.fast:
        write_doc(a.write_doc, rows)
    problems = check_doc(a.check_doc, rows) if a.check_doc else []
    for p in problems:
        print(f"side_by_side: doc: {p}")
    return 1 if failed or problems else 0


# ---------------------------------------------------------------- self-sampling

SELF_WHO = ("perf", "ours", "ours-100ms", "ours-1s")


def self_args(sleep_s):
    return ["-a", "-F", "4000", "--", "sleep", f"{sleep_s:g}"]


def self_samples(path, pid):
    """Samples of the recorder's own process (its pid, every thread), and of all."""
    own, total = 0, 0
    for line in run([PERF, "script", "-i", path, "-F", "pid"]).stdout.splitlines():
        if line.strip():
            total += 1
            own += line.strip() == str(pid)
    return own, 0, total


def self_sampling_run(ctx, who, tmp, sleep_s):
    out = os.path.join(tmp, f"{who}.data")
    argv = [PERF, "record", "-q", "-o", out] if who == "perf" else [ctx.record, "-q", "-o", out]
    if who == "ours-100ms":  # reading every 100 ms, as the default did until 2026-11-25
        argv += ["--header-interval-ms", "100"]
    if who == "ours-1s":  # header checkpoints (and timed reads) every second, the default until 2026-11-26
        argv += ["--header-interval-ms", "1000"]
    argv += self_args(sleep_s)
    with RecordingLock():
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        return None, f"{who} exit {p.returncode}: {first_line(err)}"
    return self_samples(out, p.pid), ""


def self_sampling(ctx, runs, sleeps, who_list):
    """RUNS recordings of -a -F 4000 -- sleep S (each S of `sleeps`) by each recorder under load (two
    busy threads), alternating: samples of the recorder's own process, per run."""
    load = subprocess.Popen([ctx.shares, "1000000", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    figures = {(s, w): [] for s in sleeps for w in who_list}
    try:
        for _ in range(runs):
            for sleep_s in sleeps:
                for who in who_list:
                    tmp = tempfile.mkdtemp(prefix="side_by_side-")
                    counts, problem = self_sampling_run(ctx, who, tmp, sleep_s)
                    shutil.rmtree(tmp, ignore_errors=True)
                    if problem:
                        print(f"side_by_side: {problem}")
                        return 1
                    figures[(sleep_s, who)].append(counts)
                    print(f"sleep {sleep_s:g} {who}: own process {counts[0]} samples of {counts[2]}", flush=True)
    finally:
        load.kill()
        load.wait()
    for sleep_s in sleeps:
        print(f"\n{' '.join(self_args(sleep_s))}, {runs} runs, two busy threads beside:")
        for who in who_list:
            rows = figures[(sleep_s, who)]
            own = [r[0] for r in rows]
            print(f"{who:10} own samples per run {own} (median {statistics.median(own)}, total {sum(own)} of "
                  f"{sum(r[2] for r in rows)} samples)")
    if len(sleeps) > 1:
        print("\nall lengths:")
        for who in who_list:
            rows = [r for s in sleeps for r in figures[(s, who)]]
            print(f"{who:10} own samples {sum(r[0] for r in rows)} of {sum(r[2] for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
