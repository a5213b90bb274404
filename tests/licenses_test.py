#!/usr/bin/env python3
"""licenses/copyright, the one list of what capguard's binaries contain and under which
licences, is complete and true:
  - every library CMakeLists.txt links statically (libdw, libelf, zlib, liblzma, libbz2, libzstd)
    and every header-only library compiled in (fmt, CLI11), and the GCC runtime, has its
    `Files: embedded/...` paragraph, and every licence named has its text;
  - each paragraph's copyright lines and version are those of the Debian package it was built
    from (/usr/share/doc/PACKAGE/copyright, dpkg), where that package is installed (else the
    check of that paragraph is skipped, saying so);
  - the licence texts the paragraphs refer to are in licenses/.
Usage: licenses_test.py SOURCE_DIR"""

import os
import re
import subprocess
import sys

# component -> (the Debian package the build takes it from, the static libraries it provides)
COMPONENTS = {
    "elfutils": ("libdw-dev", ["dw", "elf"]),
    "zlib": ("zlib1g-dev", ["z"]),
    "xz": ("liblzma-dev", ["lzma"]),
    "bzip2": ("libbz2-dev", ["bz2"]),
    "zstd": ("libzstd-dev", ["zstd"]),
    "fmt": ("libfmt-dev", []),
    "CLI11": ("libcli11-dev", []),
    "gcc-runtime": (None, []),
}
TEXTS = ["LGPL-3.0.txt", "GPL-3.0.txt", "GPL-2.0.txt", "GCC-exception-3.1.txt"]


def paragraphs(text):
    result = []
    for block in re.split(r"\n\s*\n", text.strip()):
        fields, key = {}, None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line.strip()
            else:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        result.append(fields)
    return result


def installed_version(package):
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True,
                          text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def main():
    source = sys.argv[1]
    problems, notes = [], []
    text = open(os.path.join(source, "licenses", "copyright")).read()
    paras = paragraphs(text)
    files = {p["Files"]: p for p in paras if "Files" in p}
    licenses = {p["License"].splitlines()[0] for p in paras if "Files" not in p and "License" in p}

    cmake = open(os.path.join(source, "CMakeLists.txt")).read()
    linked = set(re.findall(r"NAMES lib(\w+)\.a", cmake))
    for group in re.findall(r"foreach\(lib ([\w ]+)\)\s*\n\s*find_library", cmake):
        linked.update(group.split())
    covered = {lib for _, libs in COMPONENTS.values() for lib in libs}
    for lib in sorted(linked - covered):
        problems.append(f"CMakeLists.txt links lib{lib}.a statically: no component in this test")
    if "fmt::fmt-header-only" not in cmake or "CLI11::CLI11" not in cmake:
        notes.append("fmt or CLI11 no longer named in CMakeLists.txt: update COMPONENTS")

    for component, (package, _) in COMPONENTS.items():
        para = files.get(f"embedded/{component}/*")
        if para is None:
            problems.append(f"licenses/copyright: no `Files: embedded/{component}/*` paragraph")
            continue
        name = para.get("License", "")
        if name not in licenses and not all(part in licenses for part in name.split(" or ")):
            problems.append(f"embedded/{component}: no License paragraph for {name!r}")
        if package is None:
            continue
        version = installed_version(package)
        debian = f"/usr/share/doc/{package}/copyright"
        if version is None or not os.path.exists(debian):
            notes.append(f"skip: {component}: {package} not installed, its notice not compared")
            continue
        upstream = re.sub(r"^\d+:", "", version).split("-")[0].split("+")[0]
        upstream = re.sub(r"\.dfsg.*$", "", upstream)
        if upstream not in para.get("Comment", ""):
            problems.append(f"embedded/{component}: the build uses {package} {version}, the "
                            f"paragraph says: {para.get('Comment', '').splitlines()[0]}")
        theirs = open(debian, encoding="utf-8").read()
        for line in para.get("Copyright", "").splitlines():
            holder = line.strip()
            # Our paragraph may list a holder on two lines where Debian has one, or the reverse.
            if holder and holder.split()[0] not in theirs:
                problems.append(f"embedded/{component}: copyright line {holder!r} not in {debian}")
            elif holder and not any(holder[:40] in l or l.strip()[:40] in holder
                                    for l in theirs.splitlines() if l.strip()):
                problems.append(f"embedded/{component}: {holder!r} not found in {debian}")
    for name in TEXTS:
        if not os.path.exists(os.path.join(source, "licenses", name)):
            problems.append(f"licenses/{name} missing")
    for path, name in (("LGPL-3.0.txt", "GNU LESSER GENERAL PUBLIC LICENSE"),
                       ("GPL-3.0.txt", "Version 3, 29 June 2007"),
                       ("GPL-2.0.txt", "Version 2, June 1991")):
        full = os.path.join(source, "licenses", path)
        if os.path.exists(full) and name not in open(full).read():
            problems.append(f"licenses/{path} is not the licence it is named after")
    for note in notes:
        print(note)
    for problem in problems:
        print("FAIL:", problem)
    if not problems:
        print(f"ok: {len(COMPONENTS)} components, each with its notice and licence text")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
