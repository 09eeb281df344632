#!/usr/bin/env python3
"""The hunt's summary (scripts/hunt.sh): what each range of fresh seeds ran
and which seeds failed, from the ranges' JSON summaries and logs.

    hunt_summary.py DIR COMMIT BUDGET_S WALL_S

Prints the summary's text and writes DIR/summary.json. A range whose
campaign crashed (a failed VERIFY: exit 3, no JSON) counts its seeds up to
the one that crashed, and the crash as a failure.
"""
import json
import os
import re
import sys

FIRST_LINE = re.compile(r"--seed random drew seed (\d+)")
CRASH = re.compile(r"^CRASH seed=(\d+): (.*)$")
REPLAY = re.compile(r"^  replay: .* (\S+\.replay\.json)$")
REPRODUCE = re.compile(r"^  reproduce: (.*)$")
FIRST_SEEDS_MAX = 10


def read_range(directory, k):
    """One range: its first seed, runs, failures [(seed, property, detail, reproduce, replay)]."""
    with open(os.path.join(directory, f"range-{k}.txt"), encoding="utf-8") as f:
        match = FIRST_LINE.search(f.readline())
    first = int(match.group(1)) if match else None
    path = os.path.join(directory, f"range-{k}.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        failures = [(x["seed"], x["property"], x["detail"], x["reproduce"],
                     x.get("shrunk_replay", x.get("replay", ""))) for x in j.get("failures", [])]
        return {"first_seed": j["first_seed"], "runs": j["runs"], "failures": failures,
                "stopped_by_budget": j["stopped_by_budget"], "crashed": False}
    return read_crashed_range(directory, k, first)


def read_crashed_range(directory, k, first):
    """A range without JSON: its log's CRASH line."""
    failures = []
    with open(os.path.join(directory, f"range-{k}.log"), encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            crash = CRASH.match(line)
            if crash:
                failures.append([int(crash.group(1)), "crash", crash.group(2), "", ""])
            reproduce, replay = REPRODUCE.match(line), REPLAY.match(line)
            if reproduce and failures and not failures[-1][3]:
                failures[-1][3] = reproduce.group(1)
            if replay and failures and not failures[-1][4]:
                failures[-1][4] = replay.group(1)
    last = max([f[0] for f in failures], default=first or 0)
    runs = last - first + 1 if first is not None and failures else 0
    return {"first_seed": first, "runs": runs, "failures": [tuple(f) for f in failures],
            "stopped_by_budget": False, "crashed": True}


def main():
    directory, commit, budget_s, wall_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ranges = []
    for k in range(1, 1_000_000):
        if not os.path.exists(os.path.join(directory, f"range-{k}.txt")):
            break
        ranges.append(read_range(directory, k))
    runs = sum(r["runs"] for r in ranges)
    failures = [f for r in ranges for f in r["failures"]]  # in the order found
    per_million = 1e6 * len(failures) / runs if runs else 0.0
    print("ranges:")
    for r in ranges:
        last = r["first_seed"] + r["runs"] - 1 if r["first_seed"] is not None else None
        note = " (crashed)" if r["crashed"] else " (stopped by the budget)" if r["stopped_by_budget"] else ""
        print(f"  {r['first_seed']}..{last}: {r['runs']} runs, {len(r['failures'])} failed{note}")
    print(f"runs: {runs:,} in {len(ranges)} ranges, {wall_s} s of a {budget_s} s budget")
    print(f"failures: {len(failures)} ({per_million:.1f} per million runs)")
    if failures:
        print("first failing seeds:")
    for seed, prop, detail, reproduce, replay in failures[:FIRST_SEEDS_MAX]:
        print(f"  seed={seed} property={prop}: {detail[:160]}")
        print(f"    reproduce: {reproduce}")
        if replay:
            print(f"    replay: bazel run //sim:replay -- {replay}")
    summary = {"commit": commit, "budget_s": budget_s, "wall_s": wall_s, "ranges": ranges, "runs": runs,
               "failures": len(failures), "failures_per_million": per_million,
               "first_failing_seeds": [{"seed": s, "property": p, "detail": d, "reproduce": c, "replay": r}
                                       for s, p, d, c, r in failures[:FIRST_SEEDS_MAX]]}
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
