#!/usr/bin/env python3
"""Function lengths in lines, from universal-ctags (its "line" and "end").

    scripts/function_lengths.py [--max N] [--top K] FILE...

Prints the K longest functions (default 20). With --max, exits 1 naming
every function longer than N lines. Test files (*_test.cc) and test helpers
(paths with /testing/) are left out: the limit is for production code.
Lambdas are counted inside the function that holds them.
"""
import argparse
import json
import subprocess
import sys


def lengths(files):
    files = [f for f in files if f.endswith((".h", ".cc")) and not f.endswith("_test.cc") and "/testing/" not in f]
    if not files:
        return []
    out = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+neKS", "--kinds-c++=f", "--extras=-q", "-o", "-"] + files,
        check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag["name"].startswith("__anon") or "end" not in tag:
            continue
        scope = tag.get("scope", "")
        name = (scope + "::" if scope else "") + tag["name"]
        rows.append((tag["end"] - tag["line"] + 1, tag["path"], tag["line"], name))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max", type=int, default=0)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    rows = lengths(args.files)
    if not rows:
        print("function_lengths: no functions found (is universal-ctags installed?)", file=sys.stderr)
        return 2
    for n, path, line, name in rows[: args.top]:
        print(f"{n:5d} {path}:{line} {name}")
    too_long = [r for r in rows if args.max and r[0] > args.max]
    for n, path, line, name in too_long:
        print(f"function_lengths: {path}:{line}: {name} is {n} lines, over {args.max}", file=sys.stderr)
    print(f"{len(rows)} functions, the longest {rows[0][0]} lines", file=sys.stderr)
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main())
