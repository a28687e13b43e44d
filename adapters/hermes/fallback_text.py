"""The static fallback text the installed Hermes release writes when no summary call was
answered, as the `static_fallback` policy's template (adapters/PROTOCOL.md, "Policies":
`{name}` holes stand for any text), read from the release itself, never assumed:

- a release with `ContextCompressor._build_static_fallback_summary` (0.16.0 on): the
  method is called on a probe (one user ask, no previous summary); the template is its
  output's heading line before the ask, the ask as `{active_task}`, and the paragraph
  after it (the "## Goal" sentence), behind a `{prefix}` hole (the summary prefix and
  any tail text merged before it) and before a `{rest}` hole (the lists of dropped
  turns, files and blockers, which depend on the window);
- an older release (0.13.0 to 0.15.2) writes the text inline in `compress()`
  (`if not summary: summary = (f"{SUMMARY_PREFIX}\\n" f"Summary generation was
  unavailable. {n_dropped} message(s) …")`): the template is that f-string, read from
  the method's source (`ast`), each formatted value a hole.

Beside the template, `words(release)` gives the words the release's fallback builder
writes around what it copies from the rows (labels such as `USER:`, `Called tool(s)`,
the fixed sections after the "## Goal" sentence): the words of every string literal of
the release's `agent/context_compressor.py` (docstrings aside) and of the provider
errors `offline.py` raises for a failed call and of the model name the driver configures
(the fallback quotes the failure reason, which may name the model).
The harness judges a fallback's words against these, the template's and every text it
sent or served (`static_fallback`'s `words`, adapters/PROTOCOL.md "Policies").

Call after `offline.patch` (the probe builds a compressor) and before any mutant.
"""

import ast
import inspect
import re
import textwrap

import offline

PROBE_ASK = "compactsim-fallback-probe-ask"
# Characters of a template at most (the protocol's limit).
TEMPLATE_CHARS_MAX = 16_000


class NoFallbackText(Exception):
    """The release writes no static fallback the driver can read."""


def of(release, compressor):
    """The template of `release` (a `release.Release`); `compressor` is one of its
    `ContextCompressor`s (only the probe reads it)."""
    cls = release.cc.ContextCompressor
    if hasattr(cls, "_build_static_fallback_summary"):
        text = _probed(compressor)
    else:
        text = _inline(cls)
    if not 0 < len(text) <= TEMPLATE_CHARS_MAX:
        raise NoFallbackText(f"fallback template of {len(text)} characters")
    return text


def _probed(compressor):
    saved = getattr(compressor, "_previous_summary", None)
    compressor._previous_summary = None
    try:
        out = compressor._build_static_fallback_summary(
            [{"role": "user", "content": PROBE_ASK}], reason=None)
    finally:
        compressor._previous_summary = saved
    at = out.find(PROBE_ASK)
    if at < 0:
        raise NoFallbackText("the probe's ask is not in the fallback text")
    line_start = out.rfind("\n", 0, at) + 1
    line_end = out.find("\n", at)
    heading = out.rfind("\n", 0, line_start - 1)
    if line_end < 0 or heading < 0:
        raise NoFallbackText("no heading line before the ask in the fallback text")
    goal_end = out.find("\n\n", line_end + 2)
    goal_end = len(out) if goal_end < 0 else goal_end
    return ("{prefix}" + _literal(out[heading:line_start]) + "{active_task}"
            + _literal(out[line_end:goal_end]) + "{rest}")


def _inline(cls):
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.compress)))
    for node in ast.walk(tree):
        if (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp)
                and isinstance(node.test.op, ast.Not)
                and isinstance(node.test.operand, ast.Name)
                and node.test.operand.id == "summary"):
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and stmt.targets[0].id == "summary"
                        and isinstance(stmt.value, ast.JoinedStr)):
                    return _template(stmt.value) + "{rest}"
    raise NoFallbackText("compress() assigns no f-string summary under `if not summary:`")


def _template(joined):
    """An f-string as a template: its text verbatim, each formatted value a hole
    (`SUMMARY_PREFIX` the `{prefix}` hole, with any text merged before it)."""
    out = []
    for part in joined.values:
        if isinstance(part, ast.Constant):
            out.append(_literal(part.value))
        elif isinstance(part.value, ast.Name) and part.value.id == "SUMMARY_PREFIX":
            out.append("{prefix}")
        else:
            name = ast.unparse(part.value).lower()
            out.append("{" + "".join(c if c.isalnum() else "_" for c in name) + "}")
    return "".join(out)


# Characters of the declared words at most (the protocol's limit).
WORDS_CHARS_MAX = 16_000


def words(release, model):
    """The words (sorted, one space between) the fallback of `release` may write beside
    the rows' own: its module's string literals (no docstrings), offline.py's errors and
    the configured `model` name."""
    tree = ast.parse(inspect.getsource(release.cc))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            docstrings.add(id(body[0].value))
    texts = [n.value for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]
    texts += [message for message, _status in offline._ERRORS.values()]
    texts += [offline.NETWORK_ERROR, model]
    found = {w.lower() for t in texts for w in re.findall(r"[^\W_]+", t) if not w.isdigit()}
    out = " ".join(sorted(found))
    if len(out) > WORDS_CHARS_MAX:
        raise NoFallbackText(f"fallback words of {len(out)} characters")
    return out


def _literal(text):
    """`text` as template text: a `{name}`-shaped run would read as a hole; none of the
    releases' texts has one (checked, not escaped: the template has no escape)."""
    if "{" in text and "}" in text:
        raise NoFallbackText("fallback text holds braces: %r" % text[:80])
    return text
