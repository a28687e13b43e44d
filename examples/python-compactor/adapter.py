"""The example compactor as a compactsim adapter (compactsim.sdk)."""
import sys

from compactsim.sdk import run

import compactor

fn = compactor.compact_with_planted_bug if "--planted-bug" in sys.argv else compactor.compact
run(lambda messages, ctx: fn(messages, lambda prompt: ctx.summarize(prompt=prompt)),
    name="example-compactor", version="1.0.0")
