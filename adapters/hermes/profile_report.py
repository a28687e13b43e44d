"""Sums the per-child profiles profile_child.py wrote: python3 profile_report.py DIR [N]
prints the children, their CPU seconds (total, to the hello reply, from the hello to the
store `open` reply, after it), the requests by kind, and the N (default 25) functions of
the merged profile with the most cumulative time."""

import glob
import json
import os
import pstats
import sys


def main(out_dir, top):
    cpu = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out_dir, "*.cpu")))]
    total = sum(c["cpu_s"] for c in cpu)
    hello = sum(c["hello_cpu_s"] or 0 for c in cpu)
    opened = [c for c in cpu if c["open_cpu_s"] is not None]
    open_s = sum(c["open_cpu_s"] - (c["hello_cpu_s"] or 0) for c in opened)
    kinds = {}
    for c in cpu:
        for k, n in c["requests"].items():
            kinds[k] = kinds.get(k, 0) + n
    print(f"children {len(cpu)} (opened a store: {len(opened)}); CPU s: total {total:.2f}, "
          f"to hello {hello:.2f}, hello to open {open_s:.2f}, "
          f"after open {total - hello - open_s:.2f}")
    print("requests:", ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    profs = sorted(glob.glob(os.path.join(out_dir, "*.prof")))
    if profs:
        stats = pstats.Stats(*profs, stream=sys.stdout)
        stats.sort_stats("cumulative").print_stats(top)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
