"""The figures of a sharded gateway run (FINDINGS.md, "The 480-case runs"): cases failed,
turns, restarts, crashes per crash point, duplicates, resets, store requests and the first
invariant per failing case, summed over the shards that finished.

Usage: python3 adapters/hermes/gateway_run_table.py DIR
  DIR holds shard-K/report.json and shard-K.log (the run's stdout, for its wall time).
"""
import collections, glob, json, os, re, sys
d = sys.argv[1]
tot = collections.Counter(); cov = collections.Counter(); first = collections.Counter(); wall = 0.0
shards = []
for p in sorted(glob.glob(os.path.join(d, "shard-*/report.json")), key=lambda p: int(re.search(r"shard-(\d+)", p).group(1))):
    r = json.load(open(p)); s = r["summary"]
    shards.append(re.search(r"shard-(\d+)", p).group(1))
    for k in ("cases", "cases_failed", "cases_liveness", "cases_internal", "turns", "passes"):
        tot[k] += s["totals"][k]
    cov.update(s["coverage"])
    for c in r["cases"]:
        o = c["outcome"]
        if o["kind"] != "clean":
            first[o.get("invariant", o["kind"])] += 1
    log = open(os.path.dirname(p) + ".log").read()
    m = re.search(r"wall ([0-9.]+) s", log); wall += float(m.group(1)) if m else 0
print(f"shards {len(shards)} ({','.join(shards)}); cases {tot['cases']}, failed {tot['cases_failed']}, liveness {tot['cases_liveness']}, internal {tot['cases_internal']}; turns {tot['turns']}, passes {tot['passes']}; wall (sum of shards) {wall:.0f} s")
print("restarts (gateway.restarts)", cov["gateway.restarts"], "child restarts", cov["gateway.store.child_restarts"])
print("crashes:", ", ".join(f"{k.split('.')[-1]} {v}" for k, v in sorted(cov.items()) if k.startswith("gateway.crash.")))
print("duplicates", cov["gateway.duplicates"], "retries", cov["gateway.retries"], "resets", cov["gateway.resets"], "session.resets", cov["session.resets"], "commands.reset", cov["gateway.commands.reset"], "turns.exhausted", cov["turns.exhausted"])
print("store requests", cov["gateway.store.requests"], "reads", cov["gateway.store.reads"], "foreign rows", cov["gateway.store.foreign_rows"])
print("first invariant per failing case:", ", ".join(f"{k} {v}" for k, v in first.most_common()))
