"""compactsim.sdk over the wire: an adapter subprocess fed protocol lines."""
import json
import subprocess
import sys
import textwrap

HELLO = {"type": "hello", "id": 0, "protocol": 1, "protocols": [1, 2]}
ROWS = [{"role": "system", "content": "s"}, {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"}]


def batch(rid, rows=ROWS):
    return {"type": "batch_pass", "id": rid, "trigger": "manual", "force": True, "turn": 3,
            "transcript": rows, "context_window_tokens": 8000, "now_ms": 5, "config": {}}


def converse(tmp_path, env, source, lines):
    """The adapter's stdout lines (parsed) and stderr for `lines` sent at once."""
    path = tmp_path / "adapter.py"
    path.write_text(textwrap.dedent(source))
    proc = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                          input="".join(json.dumps(m) + "\n" for m in lines), timeout=60)
    return [json.loads(ln) for ln in proc.stdout.splitlines()], proc.stderr


FOLD = """
    from compactsim.sdk import CompactionError, run

    def compact(messages, ctx):
        if ctx.config.get("mode") == "typed":
            raise CompactionError("cannot fold a transcript of %d rows" % len(messages))
        if ctx.config.get("mode") == "crash":
            return 1 // 0
        text = ctx.summarize(prompt="fold")
        ctx.labels["note"] = "folded"
        return messages[:1] + [{"role": "user", "content": text}] + messages[-1:]

    run(compact, name="fold", version="9")
"""


def test_hello_declares_what_a_function_serves(tmp_path, sdk_env):
    out, _ = converse(tmp_path, sdk_env, FOLD, [HELLO])
    assert out == [{"type": "hello", "id": 0, "protocol": 2, "name": "fold", "version": "9",
                    "capabilities": {"micro_pass": False, "batch_pass": True, "hooks": []}}]


def test_a_pass_asks_the_summarizer_and_returns_the_new_transcript(tmp_path, sdk_env):
    hello = dict(HELLO, protocols=[1])
    answer = {"type": "summary", "id": 1, "call": 0, "text": "S", "finish_reason": "stop"}
    out, _ = converse(tmp_path, sdk_env, FOLD, [hello, batch(1), answer])
    assert out[1] == {"type": "summarize", "id": 1, "call": 0, "prompt": "fold"}
    assert out[2] == {"type": "result", "id": 1, "labels": {"note": "folded"},
                      "transcript": [ROWS[0], {"role": "user", "content": "S"}, ROWS[-1]]}


def test_a_condense_is_asked_with_its_purpose(tmp_path, sdk_env):
    source = FOLD.replace('ctx.summarize(prompt="fold")',
                          'ctx.summarize(prompt="fold", purpose="condense")')
    answer = {"type": "summary", "id": 1, "call": 0, "text": "S", "finish_reason": "stop"}
    out, _ = converse(tmp_path, sdk_env, source, [dict(HELLO, protocols=[1]), batch(1), answer])
    assert out[1] == {"type": "summarize", "id": 1, "call": 0, "prompt": "fold",
                      "purpose": "condense"}


def test_a_failed_summary_leaves_the_transcript_labelled_aborted(tmp_path, sdk_env):
    hello = dict(HELLO, protocols=[1])
    failed = {"type": "summary", "id": 1, "call": 0, "error": "timeout", "message": "slow"}
    length = {"type": "summary", "id": 2, "call": 0, "text": "", "finish_reason": "length"}
    out, _ = converse(tmp_path, sdk_env, FOLD, [hello, batch(1), failed, batch(2), length])
    assert out[2] == {"type": "result", "id": 1, "transcript": ROWS,
                      "labels": {"outcome": "aborted", "summary_error": "timeout"}}
    assert out[4]["labels"] == {"outcome": "aborted", "summary_error": "length"}


def test_a_typed_exception_is_the_protocols_error(tmp_path, sdk_env):
    req = dict(batch(1), config={"mode": "typed"})
    out, _ = converse(tmp_path, sdk_env, FOLD, [HELLO, req])
    assert out[1] == {"type": "error", "id": 1,
                      "message": "batch_pass 1 (turn 3): cannot fold a transcript of 4 rows"}


def test_a_crash_in_user_code_is_reported_with_its_traceback(tmp_path, sdk_env):
    req = dict(batch(1), config={"mode": "crash"})
    out, err = converse(tmp_path, sdk_env, FOLD, [HELLO, req, batch(2)])
    assert out[1]["type"] == "error" and out[1]["id"] == 1
    message = out[1]["message"]
    assert message.startswith("crash in user code during batch_pass 1 (turn 3): "
                              "ZeroDivisionError: integer division or modulo by zero")
    assert "Traceback (most recent call last)" in message and "return 1 // 0" in message
    assert "return 1 // 0" in err
    # The adapter goes on serving.
    assert out[2]["type"] == "summarize"


def test_a_class_declares_its_passes_and_hooks(tmp_path, sdk_env):
    source = """
        from compactsim.sdk import run

        class Keep:
            def restart(self):
                self.seen = 0

            def micro_pass(self, messages, ctx):
                self.seen += 1
                return messages

            def fallback_streak(self, ctx):
                return self.seen

        run(Keep(), name="keep", version="1", policies={"protect_first_n": {}})
    """
    hook = {"type": "hook", "id": 3, "hook": "fallback_streak", "args": {}, "turn": 0,
            "transcript": [], "context_window_tokens": 8000, "now_ms": 0, "config": {}}
    micro = dict(batch(2), type="micro_pass")
    out, _ = converse(tmp_path, sdk_env, source,
                      [dict(HELLO, protocols=[1]), {"type": "restart", "id": 1}, micro, hook])
    assert out[0]["capabilities"] == {"micro_pass": True, "batch_pass": False,
                                      "hooks": ["fallback_streak"],
                                      "policies": {"protect_first_n": {}}}
    assert out[1] == {"type": "result", "id": 1}
    assert out[2] == {"type": "result", "id": 2, "transcript": ROWS}
    assert out[3] == {"type": "result", "id": 3, "value": 1}


def test_a_result_that_is_not_rows_is_an_error(tmp_path, sdk_env):
    source = """
        from compactsim.sdk import run
        run(lambda messages, ctx: "nope")
    """
    out, _ = converse(tmp_path, sdk_env, source, [HELLO, batch(1)])
    assert out[1] == {"type": "error", "id": 1, "message":
                      "batch_pass 1 (turn 3): the compactor returned str, not a list of message dicts"}
