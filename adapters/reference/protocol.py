"""The adapter side of the compactsim stdio protocol: the SDK's module
`python/compactsim/protocol.py`, importable by path from here (the Hermes, LangChain and
ADK adapters run in venvs without the compactsim package). `import protocol` gives that
very module (not a copy), so a fixture that patches `protocol.serve` patches the SDK's.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from compactsim import protocol as _sdk  # noqa: E402

sys.modules[__name__] = _sdk
