#!/usr/bin/env python3
"""Wheels for the install tests, made offline from the built one.

  wheel_tools.py bump WHEEL OUTDIR VERSION   the same wheel under a newer version (what `pip
                                             install -U capguard-cuda` would find on PyPI)
  wheel_tools.py impostor OUTDIR             a wheel of the distribution `capguard` with an
                                             import package `capguard`, like the unrelated
                                             project of that name on PyPI"""

import base64
import hashlib
import os
import re
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path, files, dist_info):
    """files: {name: bytes} without RECORD; writes RECORD last."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        lines = []
        for name, (data, mode) in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (mode & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, data)
            lines.append(record_line(name, data))
        lines.append(f"{dist_info}/RECORD,,")
        out.writestr(f"{dist_info}/RECORD", "\n".join(lines) + "\n")


def bump(wheel, outdir, version):
    name = os.path.basename(wheel)
    dist, old = re.match(r"([^-]+)-([^-]+)-", name).groups()
    old_info, new_info = f"{dist}-{old}.dist-info", f"{dist}-{version}.dist-info"
    old_data, new_data = f"{dist}-{old}.data", f"{dist}-{version}.data"
    files = {}
    with zipfile.ZipFile(wheel) as source:
        for info in source.infolist():
            if info.filename.endswith("/RECORD"):
                continue
            data = source.read(info)
            target = info.filename.replace(old_info, new_info, 1).replace(old_data, new_data, 1)
            if target == f"{new_info}/METADATA":
                data = re.sub(rb"^Version: .*$", f"Version: {version}".encode(), data,
                              count=1, flags=re.M)
            if target.endswith("/_version.py"):
                data = f'__version__ = "{version}"\n'.encode()
            files[target] = (data, info.external_attr >> 16)
    out = os.path.join(outdir, name.replace(f"-{old}-", f"-{version}-", 1))
    write_wheel(out, files, new_info)
    print(out)


def impostor(outdir):
    info = "capguard-0.1.6.dist-info"
    files = {
        "capguard/__init__.py": (b'"""Not capguard-cuda: stands for another project."""\n',
                                 0o644),
        f"{info}/METADATA": (b"Metadata-Version: 2.1\nName: capguard\nVersion: 0.1.6\n", 0o644),
        f"{info}/WHEEL": (b"Wheel-Version: 1.0\nGenerator: wheel_tools\nRoot-Is-Purelib: true\n"
                          b"Tag: py3-none-any\n", 0o644),
        f"{info}/top_level.txt": (b"capguard\n", 0o644),
    }
    out = os.path.join(outdir, "capguard-0.1.6-py3-none-any.whl")
    write_wheel(out, files, info)
    print(out)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "bump":
        bump(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "impostor":
        impostor(sys.argv[2])
    else:
        sys.exit(__doc__)
