"""Where a Hermes release writes the compressor state the agent loop's hooks read
(`_summary_failure_cooldown_until`: `cooling_down`; `_fallback_compression_streak`:
`fallback_streak`), read from the release's own source: every assignment to either
attribute in the `agent` package, with its file, line and enclosing function, and every
place the package starts a thread, a timer or an executor in those files.

  python3 adapters/hermes/state_writes.py SITE_PACKAGES [SITE_PACKAGES...]

(one `lib/python3.X/site-packages` per release; the release's `agent/` is read as text,
never imported). FLOOR.md, "The hooks answered from labels", explains why these writes
let the driver answer the hooks with its pass labels.
"""

import ast
import os
import sys

ATTRS = ("_summary_failure_cooldown_until", "_fallback_compression_streak")
THREADS = ("Thread", "Timer", "ThreadPoolExecutor", "start_new_thread")


def _targets(node):
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def _flat(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _flat(t)
    else:
        yield target


def writes(path):
    """(line, function, attribute, thread call or None) of one source file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = []

    def walk(node, func):
        for child in ast.iter_child_nodes(node):
            name = func
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = child.name if func == "<module>" else f"{func}.{child.name}"
            elif isinstance(child, ast.ClassDef):
                name = child.name
            for t in _targets(child):
                for leaf in _flat(t):
                    if isinstance(leaf, ast.Attribute) and leaf.attr in ATTRS:
                        out.append((child.lineno, name, leaf.attr, None))
            if isinstance(child, ast.Call):
                f = child.func
                called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if called in THREADS:
                    out.append((child.lineno, name, None, called))
                # setattr(self, "<attr>", ...) or a helper given the name
                # (iot 0.22.2.post1: `self._load_durable("_fallback_compression_streak", ...)`).
                for a in child.args:
                    if isinstance(a, ast.Constant) and a.value in ATTRS:
                        out.append((child.lineno, name, f"{a.value} (by name, {called})", None))
            walk(child, name)

    walk(tree, "<module>")
    return sorted(out)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    for site in argv:
        agent = os.path.join(site, "agent")
        if not os.path.isdir(agent):
            sys.exit(f"{agent}: no agent package")
        print(f"== {site}")
        for name in sorted(os.listdir(agent)):
            if not name.endswith(".py"):
                continue
            rows = writes(os.path.join(agent, name))
            if not any(attr for _, _, attr, _ in rows):
                continue
            for line, func, attr, thread in rows:
                what = attr or f"starts {thread}"
                print(f"agent/{name}:{line}\t{func}\t{what}")


if __name__ == "__main__":
    main(sys.argv[1:])
