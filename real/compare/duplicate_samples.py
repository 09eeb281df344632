#!/usr/bin/env python3
"""Counts the samples a recorder wrote twice into its perf.data: records of
PERF_RECORD_SAMPLE with the same CPU, nanosecond time, TID and IP (two
samples of one CPU never share a nanosecond). perf record 6.1 writes a few
(docs/interpose.md, finding 5: perf_mmap__push loads data_head twice);
the recorder should write none.

usage: duplicate_samples.py --record RECORD [--runs N] [--seconds S] [--freq F] [--pages P]
  runs `perf record -a -F F -m P -- sleep S` and RECORD (ringsim-record)
  with the same options N times each, alternating, and prints per run the
  samples and the duplicates `perf script` shows.
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile


def duplicates(path):
    out = subprocess.run(['perf', 'script', '-i', path, '-F', 'cpu,time,tid,ip', '--ns'], capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f'duplicate_samples: perf script -i {path}: {out.stderr.strip()}')
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    counts = collections.Counter(lines)
    return len(lines), sum(n - 1 for n in counts.values() if n > 1)


def main():
    a = argparse.ArgumentParser()
    a.add_argument('--record', required=True)
    a.add_argument('--runs', type=int, default=3)
    a.add_argument('--seconds', type=float, default=8)
    a.add_argument('--freq', type=int, default=20000)
    a.add_argument('--pages', type=int, default=1)
    o = a.parse_args()
    common = ['-a', '-F', str(o.freq), '-m', str(o.pages), '--', 'sleep', str(o.seconds)]
    who = {'perf': ['perf', 'record', '-q'], 'ours': [o.record, '-q']}
    total = {k: [0, 0] for k in who}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(o.runs):
            for name, cmd in who.items():
                path = os.path.join(tmp, f'{name}.data')
                r = subprocess.run(cmd + ['-o', path] + common, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f'duplicate_samples: {" ".join(cmd)}: exit {r.returncode}: {r.stderr.strip()}')
                samples, dups = duplicates(path)
                total[name][0] += samples
                total[name][1] += dups
                print(f'run {run + 1} {name}: {samples} samples, {dups} written twice', flush=True)
    for name, (samples, dups) in total.items():
        print(f'{name}: {dups} samples written twice of {samples}')


if __name__ == '__main__':
    main()
