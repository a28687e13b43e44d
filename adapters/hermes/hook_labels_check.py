"""Checks a `--record` of a Hermes run whose adapter answered the `cooling_down` and
`fallback_streak` hooks over the wire: would the harness have given the agent loop the
same answers from the pass labels alone (adapters/PROTOCOL.md, Hooks: a hook the hello
does not list is answered from the newest pass's `cooldown_until_ms` / `fallback_streak`,
0 after a `restart`)? Prints the hooks compared and every disagreement; exit 1 on one.

  python3 adapters/hermes/hook_labels_check.py RECORD_DIR

Uses the stdlib only; reads every `seed-*-case-*.jsonl` of the record (shrink attempts'
files too). FLOOR.md, "The hooks answered from labels".
"""

import glob
import json
import os
import sys

PASSES = ("batch_pass", "micro_pass")


def check(path):
    """(hooks compared, disagreements) of one record file."""
    until_ms = streak = 0
    asked = {}
    compared, bad = 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            msg = rec["msg"]
            if rec["dir"] == "to_adapter":
                if msg["type"] == "restart":
                    until_ms = streak = 0
                if msg["type"] in PASSES or msg["type"] == "hook":
                    asked[msg["id"]] = msg
                continue
            if msg.get("type") != "result" or msg.get("id") not in asked:
                continue
            req = asked.pop(msg["id"])
            if req["type"] in PASSES:
                labels = msg.get("labels") or {}
                if req["type"] == "batch_pass":
                    until_ms = labels.get("cooldown_until_ms", 0)
                    streak = labels.get("fallback_streak", 0)
                else:
                    until_ms = labels.get("cooldown_until_ms", until_ms)
                    streak = labels.get("fallback_streak", streak)
                continue
            hook, value = req["hook"], msg.get("value")
            if hook == "cooling_down":
                from_labels = req["now_ms"] < until_ms
            elif hook == "fallback_streak":
                from_labels = streak
            else:
                continue
            compared += 1
            if value != from_labels:
                bad.append(f"{path}:{n}: hook {hook} at now_ms {req['now_ms']} answered "
                           f"{value!r}, the labels give {from_labels!r}")
    return compared, bad


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    files = sorted(glob.glob(os.path.join(argv[0], "seed-*-case-*.jsonl")))
    if not files:
        sys.exit(f"{argv[0]}: no seed-*-case-*.jsonl record files")
    total, bad = 0, []
    for path in files:
        n, b = check(path)
        total += n
        bad += b
    for line in bad:
        print(line)
    print(f"{len(files)} record files, {total} hooks compared, {len(bad)} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
