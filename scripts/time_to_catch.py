#!/usr/bin/env python3
"""Time to catch each mutant (sim/mutants.h), with the campaign's uniform
draws, with --swarm and with PCT (--pct-depth D --pct-steps K, D of
--pct-depths): for each mutant and search, one campaign of
WINDOWS * WINDOW seeds (--max-failures as many: every failing seed is
listed), then the runs each window of WINDOW seeds needed until its first
failure (WINDOW + 1 when none failed), their median, and the share of
failing runs. Runs, not seconds: the count does not depend on the machine.

usage: time_to_catch.py --campaign BIN [--seed S] [--window W] [--windows K] [--jobs J] [--mutants a,b,...]
                        [--searches uniform,swarm,pct] [--pct-depths 2,3] [--pct-steps K]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MUTANTS = ['early_release', 'no_pause', 'drop_lost', 'shared_offset', 'reuse_buffer', 'eagain_busy_loop',
           'error_resubmit', 'aux_early_tail', 'aux_no_reenable', 'period_rule_ignored',
           'eintr_retry_hidden']


def failing_seeds(binary, mutant, extra, seed, runs, jobs):
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, 'summary.json')
        cmd = [binary, '--mutant', mutant, '--seed', str(seed), '--runs', str(runs), '--max-failures', str(runs),
               '--shrink-s', '0', '--determinism-every', '0', '--budget-s', '0', '--no-progress', '--jobs', str(jobs),
               '--replay-dir', os.path.join(tmp, 'replays'), '--json', summary] + extra
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not os.path.exists(summary):
            sys.exit(f'time_to_catch: {" ".join(cmd)} wrote no summary (exit {r.returncode})')
        with open(summary) as f:
            j = json.load(f)
        if j['runs'] != runs:
            sys.exit(f'time_to_catch: {mutant}: {j["runs"]} of {runs} runs ran')
        return sorted(f['seed'] for f in j['failures'])


def main():
    a = argparse.ArgumentParser()
    a.add_argument('--campaign', required=True)
    a.add_argument('--seed', type=int, default=1)
    a.add_argument('--window', type=int, default=40)
    a.add_argument('--windows', type=int, default=10)
    a.add_argument('--jobs', type=int, default=2)
    a.add_argument('--mutants', default=','.join(MUTANTS))
    a.add_argument('--searches', default='uniform,swarm,pct')
    a.add_argument('--pct-depths', default='2,3')
    a.add_argument('--pct-steps', type=int, default=100)
    o = a.parse_args()
    searches = []  # (name, extra arguments)
    for name in o.searches.split(','):
        if name == 'uniform':
            searches.append(('uniform', []))
        elif name == 'swarm':
            searches.append(('swarm', ['--swarm']))
        elif name == 'pct':
            for d in o.pct_depths.split(','):
                searches.append((f'PCT d={d} k={o.pct_steps}', ['--pct-depth', d, '--pct-steps', str(o.pct_steps)]))
        else:
            sys.exit(f'time_to_catch: unknown search {name}')
    runs = o.window * o.windows
    print(f'seeds {o.seed}..{o.seed + runs - 1}: {o.windows} windows of {o.window}; runs to the first failure in each '
          f'window (>{o.window}: none), median; failing runs')
    print('| mutant | ' + ' | '.join(f'{n}: median runs to catch | {n}: failing runs' for n, _ in searches) + ' |')
    print('| --- |' + ' --- | --- |' * len(searches))
    for mutant in o.mutants.split(','):
        cells = []
        for _, extra in searches:
            failed = set(failing_seeds(o.campaign, mutant, extra, o.seed, runs, o.jobs))
            firsts = []
            for w in range(o.windows):
                start = o.seed + w * o.window
                hit = next((k + 1 for k in range(o.window) if start + k in failed), o.window + 1)
                firsts.append(hit)
            median = statistics.median(firsts)
            cells.append(f'{median:g}' if median <= o.window else f'>{o.window}')
            cells.append(f'{len(failed)} of {runs}')
        print(f'| `{mutant}` | ' + ' | '.join(cells) + ' |', flush=True)


if __name__ == '__main__':
    main()
