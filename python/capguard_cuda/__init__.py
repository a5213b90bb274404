"""capguard for Python users (the distribution capguard-cuda): the wheel puts the `capguard`
executable in the environment's bin/ and libcapguard.so in its lib/capguard/ (where `capguard
run` looks for it). This package only finds them, for `python -m capguard_cuda`; and
`capguard_cuda.rehearse("name")` marks a region for `capguard run --rehearse` (capture
rehearsal, _rehearse.py).

It is named capguard_cuda, not capguard, because the `capguard` distribution on PyPI, another
project, owns the import name `capguard`: the two would overwrite each other's files."""

import os
import site
import sys
import sysconfig

from capguard_cuda._rehearse import rehearse

try:  # written into the wheel by scikit-build-core (pyproject.toml: tool.scikit-build.generate)
    from capguard_cuda._version import __version__
except ImportError:  # a checkout's python/ on PYTHONPATH: not built, no version
    __version__ = "0+unknown"

__all__ = ["__version__", "executable", "rehearse"]


def _candidate_roots():
    # The wheel's data files land in the installation scheme's root: sys.prefix for a venv or
    # a system install, the user base for `pip install --user`.
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.dirname(sysconfig.get_path("scripts"))
    yield sys.prefix
    yield getattr(site, "USER_BASE", None) or ""
    # <root>/lib/pythonX.Y/site-packages/capguard_cuda -> <root>
    yield os.path.normpath(os.path.join(here, "..", "..", "..", ".."))


def executable():
    """Path of the installed capguard executable."""
    for root in _candidate_roots():
        path = os.path.join(root, "bin", "capguard")
        if root and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("capguard executable not found beside this Python installation")
