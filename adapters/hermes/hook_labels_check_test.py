"""hook_labels_check.py and state_writes.py on made-up input (stdlib only, < 1 s):

  python3 adapters/hermes/hook_labels_check_test.py
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hook_labels_check  # noqa: E402
import state_writes  # noqa: E402


def record(path, cooling_answer):
    """A case: a batch pass labelling a cooldown to 60,000 ms, then two hooks."""
    lines = [
        ("to_adapter", {"type": "restart", "id": 1}),
        ("to_adapter", {"type": "batch_pass", "id": 2, "now_ms": 0}),
        ("from_adapter", {"type": "result", "id": 2,
                          "labels": {"cooldown_until_ms": 60000, "fallback_streak": 1}}),
        ("to_adapter", {"type": "hook", "id": 3, "hook": "cooling_down", "now_ms": 59999}),
        ("from_adapter", {"type": "result", "id": 3, "value": cooling_answer}),
        ("to_adapter", {"type": "hook", "id": 4, "hook": "fallback_streak", "now_ms": 59999}),
        ("from_adapter", {"type": "result", "id": 4, "value": 1}),
        ("to_adapter", {"type": "restart", "id": 5}),
        ("to_adapter", {"type": "hook", "id": 6, "hook": "fallback_streak", "now_ms": 70000}),
        ("from_adapter", {"type": "result", "id": 6, "value": 0}),
    ]
    with open(path, "w") as f:
        for d, msg in lines:
            f.write(json.dumps({"dir": d, "msg": msg}) + "\n")


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "seed-1-case-0.jsonl")
        record(path, True)
        assert hook_labels_check.check(path) == (3, []), hook_labels_check.check(path)
        record(path, False)
        n, bad = hook_labels_check.check(path)
        assert n == 3 and len(bad) == 1 and "cooling_down at now_ms 59999" in bad[0], bad
        src = os.path.join(d, "m.py")
        with open(src, "w") as f:
            f.write("import threading\n"
                    "class C:\n"
                    "    def fail(self):\n"
                    "        self._summary_failure_cooldown_until, x = 5.0, 1\n"
                    "    def load(self):\n"
                    "        self._load('_fallback_compression_streak')\n"
                    "    def spawn(self):\n"
                    "        threading.Thread(target=self.fail).start()\n")
        got = [(line, func, what) for line, func, what, _ in state_writes.writes(src) if what]
        assert got == [(4, "C.fail", "_summary_failure_cooldown_until"),
                       (6, "C.load", "_fallback_compression_streak (by name, _load)")], got
        assert any(t == "Thread" for *_, t in state_writes.writes(src)), "thread not seen"
    print("ok: hook_labels_check flags a hook answer the labels do not give; "
          "state_writes finds writes, writes by name and threads")


if __name__ == "__main__":
    main()
