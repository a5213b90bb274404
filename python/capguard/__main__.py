"""`python -m capguard ARGS...` runs the installed capguard executable with ARGS."""

import os
import sys

from capguard import executable


def main():
    try:
        path = executable()
    except FileNotFoundError as error:
        print(f"capguard: {error}", file=sys.stderr)
        return 3
    os.execv(path, [path, *sys.argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
