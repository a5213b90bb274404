"""`python -m capguard_cuda ARGS...` runs the installed capguard executable with ARGS."""

import os
import sys

from capguard_cuda import executable


def main():
    try:
        path = executable()
    except FileNotFoundError as error:
        print(f"capguard: {error}", file=sys.stderr)
        return 3
    # argv[0] is the plain name: capguard finds itself through /proc/self/exe, and its messages
    # name the command, not where this environment keeps it.
    os.execv(path, ["capguard", *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
