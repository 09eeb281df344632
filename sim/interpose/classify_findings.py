#!/usr/bin/env python3
"""Sorts the failures of ringsim-run campaigns of perf record (-v logs) by
the findings of docs/interpose.md, from each verdict's own words and the
run's end; prints the counts per log and the failures that fit none.

usage: classify_findings.py LOG [LOG...]
"""
import collections
import re
import sys


def classify(prop, msg, end):
    if 'renamed onto a name' in msg:
        return 'finding 3: a file name used twice'
    if prop == 'file_valid' and 'did not fail after' in msg:
        return 'finding 1: file_valid after hard write errors'
    if prop == 'exactly_once' and 'never read' in msg and 'did not fail after' in msg and end == 'exit 0':
        # The same: exit 0 after hard write errors, the records left in the
        # ring (seen with --mmap-flush, 2026-11-27).
        return 'finding 1: never read after hard write errors, exit 0'
    if prop == 'exactly_once' and 'never read' in msg and end == 'signal 2':
        return 'finding 2: never read, ended by SIGINT'
    if prop == 'exactly_once' and 'is in the files 2 times' in msg:
        return 'finding 5: a record written twice (with --interleave: perf_mmap__push loads data_head twice)'
    if prop == 'liveness' and ('after its workload ended' in msg or 'AIO calls' in msg):
        return 'finding 4: liveness (with --disk-full: AIO resubmitted for ever)'
    return None


def main(paths):
    if not paths:
        sys.exit(__doc__)
    unexplained = 0
    for path in paths:
        ends, fails = {}, []
        with open(path) as f:
            for line in f:
                m = re.match(r'seed (\d+): (exit \d+|signal \d+)', line)
                if m:
                    ends[m.group(1)] = m.group(2)
                m = re.match(r'FAIL seed=(\d+) property=(\w+): (.*)', line)
                if m:
                    fails.append(m.groups())
        counts = collections.Counter()
        for seed, prop, msg in fails:
            kind = classify(prop, msg, ends.get(seed, '?'))
            if kind is None:
                unexplained += 1
                print(f'  {path}: seed {seed} ({ends.get(seed, "?")}) fits no finding: {prop}: {msg[:200]}')
                kind = 'none'
            counts[kind] += 1
        print(f'{path}: {len(ends)} runs, {len(fails)} failed')
        for kind, n in sorted(counts.items()):
            print(f'  {n:6d}  {kind}')
    sys.exit(1 if unexplained else 0)


if __name__ == '__main__':
    main(sys.argv[1:])
