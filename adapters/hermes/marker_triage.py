"""Which micro passes of a recorded iot run dropped the marker they had just written.

Usage (FINDINGS.md, M1 and M4):

    compactsim run --compactor external --adapter 'PYTHON adapters/hermes/hermes_micro.py' \
        --jobs 2 --shrink-time 0 --out OUT --record REC
    python3 adapters/hermes/marker_triage.py OUT/report.json REC

Rebuilds every pass's transcript from the protocol-2 record (adapters/PROTOCOL.md,
"Recording": `edits` are `[start, count]` copies of the rows the adapter holds, or whole
rows). A pass *drops its fresh marker* when it absorbed an exchange and the markers left in
its result are all rows it was given, unchanged (kept by id and text): the old marker
survived, the new one did not (iot's `_splice_micro_compact_result` keeps the last marker
by position). Reads only what crossed the wire; prints counts per first invariant.
"""

import collections
import json
import sys

# Longest record line read (a protocol line is at most 64 MiB: harness child.rs).
LINE_CHARS_MAX = 64 * 1024 * 1024


def apply_edits(base, edits):
    out = []
    for e in edits:
        if isinstance(e, list):
            start, count = e
            out.extend(base[start:start + count])
        else:
            out.append(e)
    return out


def passes(path):
    """(request, rows before, rows after, labels) of every pass, in order."""
    held, pending = [], {}
    with open(path, encoding="utf-8") as f:
        for line in iter(lambda: f.readline(LINE_CHARS_MAX), ""):
            d = json.loads(line)
            m = d.get("msg") or {}
            kind = m.get("type")
            if d["dir"] == "to_adapter" and kind in ("micro_pass", "batch_pass"):
                if "edits" in m:
                    held = apply_edits(held, m["edits"])
                elif "transcript" in m:
                    held = list(m["transcript"])
                pending[m["id"]] = (m, list(held))
            elif d["dir"] == "from_adapter" and kind == "result" and m["id"] in pending:
                req, before = pending.pop(m["id"])
                if "edits" in m:
                    after = apply_edits(before, m["edits"])
                else:
                    after = list(m.get("transcript", before))
                held = after
                yield req, before, after, m.get("labels", {})


def is_marker(row):
    return bool(row.get("_micro_compact_marker"))


def dropped_fresh_turns(path):
    """Turns whose absorbing pass left only unchanged old markers."""
    turns = []
    for req, before, after, labels in passes(path):
        if req["type"] != "micro_pass" or labels.get("outcome") != "absorbed":
            continue
        text = {r.get("_compactsim_id"): r.get("content") for r in before}
        markers = [r for r in after if is_marker(r)]
        fresh = [r for r in markers if text.get(r.get("_compactsim_id"), object()) != r.get("content")]
        if markers and not fresh:
            turns.append(req["turn"])
    return turns


def main(report_path, record_dir):
    report = json.load(open(report_path, encoding="utf-8"))
    seed = report["header"]["seed"]
    first, at_first = collections.Counter(), collections.Counter()
    any_step, cases = collections.Counter(), []
    for case in report["cases"]:
        turns = dropped_fresh_turns(f"{record_dir}/seed-{seed}-case-{case['case']}.jsonl")
        outcome = case["outcome"]
        if outcome["kind"] == "violation":
            first[outcome["invariant"]] += 1
            if outcome["turn"] in turns:
                at_first[outcome["invariant"]] += 1
        if turns:
            cases.append(case["case"])
            for inv in sorted({v["invariant"] for v in case.get("verdicts", [])}):
                any_step[inv] += 1
    print(f"cases whose first violation is at a pass that dropped its fresh marker, by invariant: "
          f"{dict(at_first)} (of first violations {dict(first)})")
    print(f"cases with a pass that dropped its fresh marker: {len(cases)}; "
          f"invariants they fire at any step: {dict(any_step)}")
    print("first cases:", ", ".join(map(str, cases[:12])))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: marker_triage.py REPORT.json RECORD_DIR")
    main(sys.argv[1], sys.argv[2])
