import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def sdk_env():
    """The environment of an adapter subprocess: the compactsim package importable (the
    installed one, else the repo's python/)."""
    import compactsim
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(compactsim.__file__)))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


@pytest.fixture
def repo():
    return REPO


PYTHON = sys.executable
