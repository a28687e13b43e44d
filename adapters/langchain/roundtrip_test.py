"""Round-trip test of the LangChain adapter's translation (run by
front/tests/integration/framework_roundtrip.rs when the venv exists):

  target/framework-venvs/langchain-1.5.0/bin/python adapters/langchain/roundtrip_test.py

Every transcript of roundtrip_cases.py goes to LangChain messages, through LangChain's
own serialization (`messages_to_dict` / `messages_from_dict`, what a checkpointer
stores), and back to rows: identical, row by row. And the summary message the
middleware builds comes back as a new row flagged `_compressed_summary`. Exit 0 and
`ok: ...` on success; exit 1 naming every differing row.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "framework"))
sys.path.insert(0, HERE)
import offline  # noqa: E402,F401

from langchain.agents.middleware.summarization import SummarizationMiddleware  # noqa: E402
from langchain_core.messages import messages_from_dict, messages_to_dict  # noqa: E402
from protocol import canonical_row  # noqa: E402

import roundtrip_cases  # noqa: E402
import translate  # noqa: E402


def main():
    failures = []
    shapes = roundtrip_cases.shapes()
    for name, rows in shapes.items():
        want = [canonical_row(r) for r in rows]
        messages = translate.to_messages(rows)
        roundtrip_cases.check(name, want, [canonical_row(r) for r in translate.to_rows(messages)],
                              failures)
        stored = messages_from_dict(messages_to_dict(messages))
        roundtrip_cases.check(name + " (stored)", want,
                              [canonical_row(r) for r in translate.to_rows(stored)], failures)
    summary = SummarizationMiddleware._build_new_messages("FACT-000009 kept")[0]
    row = translate.to_row(summary)
    if row != {"role": "user", "_compressed_summary": True,
               "content": "Here is a summary of the conversation to date:\n\nFACT-000009 kept"}:
        failures.append("summary message: %r" % row)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("ok: %d transcripts (%d rows) through LangChain messages and back, identical"
          % (len(shapes), sum(len(r) for r in shapes.values())))


if __name__ == "__main__":
    main()
