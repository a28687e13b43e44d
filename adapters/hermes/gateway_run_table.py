"""The figures of a sharded gateway run (FINDINGS.md, "The 480-case runs"), one markdown
table row per run directory: shards done (cases), cases failed, turns, restarts (child
restarts), crashes per crash point, duplicates (retries), resets reached, store requests
and reads, the first invariant per failing case, wall and CPU; with `--kinds`, the first
violations grouped by kind (invariant and message, numbers masked), each with its count,
cases and one message, for the triage.

Usage: python3 adapters/hermes/gateway_run_table.py [--kinds] DIR...
  DIR holds shard-K/report.json of `run --shard K/N --out DIR/shard-K` and progress.txt
  (one line per finished shard: `shard K/N wall_s=… … cpu.py: rc R wall W user U sys S
  cpu C`), or is a `merge`d run directory (DIR/report.json). The release is read from
  the shards' adapter command line.
"""

import collections
import glob
import json
import os
import re
import sys

CRASH_PREFIX = "gateway.crash."
HEADER = ("| release | shards done (cases) | failed | turns | restarts (child) | crashes per point "
          "| duplicates (retries) | resets reached | store requests / reads "
          "| first invariant per failing case | wall / CPU (sum of shards) |")


def reports(d):
    """(shard numbers, report dicts) of run directory `d`: its shards, or its merge."""
    merged = os.path.join(d, "report.json")
    if os.path.exists(merged):
        return ["all"], [json.load(open(merged))]
    paths = glob.glob(os.path.join(d, "shard-*", "report.json"))
    paths.sort(key=lambda p: int(re.search(r"shard-(\d+)", p).group(1)))
    return ([re.search(r"shard-(\d+)", p).group(1) for p in paths],
            [json.load(open(p)) for p in paths])


def progress(d):
    """Sums of wall and CPU seconds over progress.txt's finished shards (None if absent)."""
    path = os.path.join(d, "progress.txt")
    if not os.path.exists(path):
        return None
    wall = cpu = 0.0
    for line in open(path):
        m = re.search(r"cpu\.py: rc \d+ wall ([0-9.]+) user [0-9.]+ sys [0-9.]+ cpu ([0-9.]+)", line)
        if m:
            wall += float(m.group(1))
            cpu += float(m.group(2))
    return wall, cpu


def release(rs):
    for r in rs:
        for f in r["summary"].get("failures", []):
            m = re.search(r"hermes-venvs/([^/]+)/bin", f.get("repro", ""))
            if m:
                return m.group(1)
    return "?"


def kind(invariant, message):
    """The violation's kind: its invariant and message with numbers, times and a batch
    pass's trigger and figures masked."""
    m = re.sub(r"batch pass \([a-z-]+\) (\w+) at [0-9.]+s: [^:;]*", r"batch pass (…) \1", message)
    m = re.sub(r"\bm\d+\b", "mN", m)
    m = re.sub(r"FACT-\d+", "FACT-N", m)
    m = re.sub(r"\d+", "N", m)
    return f"{invariant}: {m}"


def row(d):
    shards, rs = reports(d)
    tot, cov, first = collections.Counter(), collections.Counter(), collections.Counter()
    for r in rs:
        s = r["summary"]
        for k in ("cases", "cases_failed", "cases_liveness", "cases_internal", "turns"):
            tot[k] += s["totals"][k]
        cov.update(s["coverage"])
        for c in r["cases"]:
            o = c["outcome"]
            if o["kind"] != "clean":
                first[o.get("invariant", o["kind"])] += 1
    crashes = sorted(((k[len(CRASH_PREFIX):].replace("_", "-"), v) for k, v in cov.items()
                      if k.startswith(CRASH_PREFIX)), key=lambda kv: (-kv[1], kv[0]))
    failed = str(tot["cases_failed"])
    if tot["cases_liveness"] or tot["cases_internal"]:
        failed += f" (liveness {tot['cases_liveness']}, internal {tot['cases_internal']})"
    times = progress(d)
    wall_cpu = f"{times[0]:.0f} s / {times[1]:.0f} s" if times else "?"
    cells = [
        release(rs),
        f"{', '.join(shards)} ({tot['cases']} cases)",
        failed,
        str(tot["turns"]),
        f"{cov['gateway.restarts']} ({cov['gateway.store.child_restarts']})",
        ", ".join(f"{k} {v}" for k, v in crashes),
        f"{cov['gateway.duplicates']} ({cov['gateway.retries']})",
        f"{cov['gateway.resets']} (exhausted auto-resets; `/reset` {cov['gateway.commands.reset']})",
        f"{cov['gateway.store.requests']} / {cov['gateway.store.reads']}",
        ", ".join(f"{k} {v}" for k, v in first.most_common()),
        wall_cpu,
    ]
    return "| " + " | ".join(cells) + " |"


def kinds(d):
    _, rs = reports(d)
    groups = collections.OrderedDict()
    for r in rs:
        for f in r["summary"].get("failures", []):
            v = f.get("violation")
            if not v:
                continue
            k = kind(v["invariant"], v["message"])
            groups.setdefault(k, []).append((f["case"], v["message"]))
    out = [f"{release(rs)}: first violations by kind"]
    for k, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        cases = ", ".join(str(c) for c, _ in items)
        out.append(f"  {len(items):4d}  {k}\n        cases {cases}\n        e.g. {items[0][1][:300]}")
    return "\n".join(out)


def main(argv):
    show_kinds = "--kinds" in argv
    dirs = [a for a in argv if a != "--kinds"]
    if not dirs:
        sys.exit(__doc__)
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for d in dirs:
        print(row(d))
    if show_kinds:
        for d in dirs:
            print()
            print(kinds(d))


if __name__ == "__main__":
    main(sys.argv[1:])
