"""Test of `Release.warm` on stand-in modules (no Hermes needed; run by .ci/run): it
imports `openai` and runs `hermes_cli.plugins.discover_plugins()` once, and a release
without them (no `openai`, no `hermes_cli`, no `discover_plugins`) starts all the same.

  python3 adapters/hermes/release_warm_test.py
"""

import importlib.abc
import importlib.machinery
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from release import Release  # noqa: E402


class StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the stand-in modules it is given and records which were imported."""

    def __init__(self, modules):
        self.modules, self.imported = modules, []

    def find_spec(self, name, path=None, target=None):
        if name in self.modules:
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        return self.modules[spec.name]

    def exec_module(self, module):
        self.imported.append(module.__name__)


def warm_with(openai=True, plugins=True, discover=True):
    """Release.warm among the stand-ins asked for: (modules imported, discovery calls)."""
    calls, modules = [], {}
    if openai:
        modules["openai"] = types.ModuleType("openai")
    if plugins:
        modules["hermes_cli"] = types.ModuleType("hermes_cli")
        modules["hermes_cli"].__path__ = []
        modules["hermes_cli.plugins"] = types.ModuleType("hermes_cli.plugins")
        if discover:
            modules["hermes_cli.plugins"].discover_plugins = lambda force=False: calls.append(force)
    names = ("openai", "hermes_cli", "hermes_cli.plugins")
    for name in names:
        sys.modules.pop(name, None)
    finder = StandIns(modules)
    # Ahead of the path finders, and hiding any installed openai/hermes_cli.
    blocker = Blocker(names)
    sys.meta_path[:0] = [finder, blocker]
    try:
        Release.__new__(Release).warm()
    finally:
        sys.meta_path.remove(finder)
        sys.meta_path.remove(blocker)
        for name in names:
            sys.modules.pop(name, None)
    return finder.imported, calls


class Blocker(importlib.abc.MetaPathFinder):
    """Makes the named modules unimportable (a release without them)."""

    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name in self.names:
            raise ImportError(f"stand-in: no {name}")
        return None


def main():
    imported, calls = warm_with()
    assert "openai" in imported, imported
    assert "hermes_cli.plugins" in imported, imported
    assert calls == [False], f"discover_plugins calls {calls}, wanted one without force"

    assert warm_with(openai=False) == (["hermes_cli", "hermes_cli.plugins"], [False])
    assert warm_with(plugins=False) == (["openai"], [])
    assert warm_with(discover=False)[1] == []
    assert warm_with(openai=False, plugins=False) == ([], [])
    print("ok: Release.warm imports openai and discovers plugins once, and tolerates "
          "a release without them")


main()
