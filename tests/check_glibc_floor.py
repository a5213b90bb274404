#!/usr/bin/env python3
"""Fails when a shipped binary needs a glibc newer than the floor (default 2.28): every ELF file in
the given files, directories, wheels (.whl) and Debian packages (.deb) is read with `objdump -T`,
and each GLIBC_x.y version it imports is compared with the floor.

    check_glibc_floor.py [--floor 2.28] PATH...     the check (release.sh, ctest glibc_floor)
    check_glibc_floor.py --self-test CC              the check catches what it must (ctest)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

VERSION = re.compile(r"\bGLIBC_(\d+)\.(\d+)(?:\.(\d+))?\b")


def is_elf(path):
    """An ELF executable or shared object: what the loader binds to glibc. Relocatable objects
    (the relink kit's .o files, ET_REL) import no symbol version until they are linked."""
    try:
        with open(path, "rb") as f:
            header = f.read(18)
    except OSError:
        return False
    return (len(header) == 18 and header[:4] == b"\x7fELF"
            and int.from_bytes(header[16:18], "little") in (2, 3))  # ET_EXEC, ET_DYN


def elf_files(root):
    if os.path.isfile(root):
        if is_elf(root):
            yield root
        return
    for directory, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(directory, name)
            if not os.path.islink(path) and is_elf(path):
                yield path


def unpack(path, work):
    """Directory holding what PATH ships (itself for a file or directory)."""
    if path.endswith(".whl"):
        target = os.path.join(work, os.path.basename(path))
        with zipfile.ZipFile(path) as wheel:
            wheel.extractall(target)
        return target
    if path.endswith((".deb", ".ddeb")):
        target = os.path.join(work, os.path.basename(path))
        subprocess.run(["dpkg-deb", "-x", path, target], check=True)
        return target
    return path


def needed_versions(path):
    """{(major, minor[, patch]): [symbols]} of the GLIBC versions PATH imports."""
    done = subprocess.run(["objdump", "-T", path], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"objdump -T {path}: {done.stderr.strip()}")
    versions = {}
    for line in done.stdout.splitlines():
        if "*UND*" not in line:
            continue  # versions this file defines are not requirements
        match = VERSION.search(line)
        if match:
            version = tuple(int(p) for p in match.groups() if p is not None)
            versions.setdefault(version, []).append(line.split()[-1])
    return versions


def check(paths, floor):
    """Problems (strings), and the number of ELF files read."""
    problems, count = [], 0
    with tempfile.TemporaryDirectory() as work:
        for path in paths:
            if not os.path.exists(path):
                problems.append(f"{path}: no such file or directory")
                continue
            root = unpack(path, work)
            files = list(elf_files(root))
            if not files:
                problems.append(f"{path}: no ELF binary in it")
            for elf in files:
                count += 1
                shown = os.path.relpath(elf, root) if root != elf else elf
                if root != path:
                    shown = f"{path}:{shown}"
                versions = needed_versions(elf)
                above = {v: s for v, s in versions.items() if v > floor}
                newest = ".".join(map(str, max(versions))) if versions else "none"
                if above:
                    detail = "; ".join(f"GLIBC_{'.'.join(map(str, v))}: {', '.join(sorted(set(s)))}"
                                       for v, s in sorted(above.items()))
                    problems.append(f"{shown}: needs glibc above {'.'.join(map(str, floor))}: "
                                    f"{detail}")
                else:
                    print(f"ok: {shown}: newest GLIBC version {newest}")
    return problems, count


def self_test(cc):
    """Builds two small shared objects with this machine's glibc: one importing only old symbols
    (must pass), one importing pthread_once, which glibc 2.34 moved into libc under a new version
    (must fail). Without glibc 2.34 here the second cannot be made: skipped (77)."""
    libc_version = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    if tuple(int(p) for p in libc_version.split(".")[:2]) < (2, 34):
        print(f"skip: glibc {libc_version} here; the self-test needs 2.34+ to make a newer binary")
        return 77
    with tempfile.TemporaryDirectory() as work:
        sources = {
            "old.c": "#include <string.h>\nsize_t f(const char *s) { return strlen(s); }\n",
            "new.c": "#include <pthread.h>\nstatic void g(void) {}\n"
                     "int f(pthread_once_t *o) { return pthread_once(o, g); }\n",
        }
        for name, text in sources.items():
            with open(os.path.join(work, name), "w") as f:
                f.write(text)
            subprocess.run([cc, "-shared", "-fPIC", "-o", os.path.join(work, name[:-2] + ".so"),
                            os.path.join(work, name)], check=True)
        old_problems, _ = check([os.path.join(work, "old.so")], (2, 28))
        new_problems, _ = check([os.path.join(work, "new.so")], (2, 28))
        missing_problems, _ = check([os.path.join(work, "absent.so")], (2, 28))
        # A relink kit: an object file is linked where it is relinked, against that glibc.
        kit = os.path.join(work, "kit")
        os.mkdir(kit)
        shutil.copy(os.path.join(work, "old.so"), kit)
        subprocess.run([cc, "-c", "-fPIC", "-o", os.path.join(kit, "new.o"),
                        os.path.join(work, "new.c")], check=True)
        kit_problems, kit_count = check([kit], (2, 28))
    failures = 0
    if kit_count != 1:
        print(f"FAIL: a relink kit's object file was read as a binary ({kit_count} ELF files)")
        failures += 1
    for what, problems, expected in (("old symbols only", old_problems, False),
                                     ("pthread_once@GLIBC_2.34", new_problems, True),
                                     ("a missing file", missing_problems, True),
                                     ("a relink kit's .o beside a .so", kit_problems, False)):
        if bool(problems) == expected:
            print(f"ok: {what}: {'rejected: ' + problems[0] if problems else 'accepted'}")
        else:
            print(f"FAIL: {what}: {'rejected' if problems else 'accepted'}, expected the opposite")
            failures += 1
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", default="2.28")
    parser.add_argument("--self-test", metavar="CC")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    if not shutil.which("objdump"):
        print("FAIL: objdump not found (apt-get install binutils)")
        return 1
    if args.self_test:
        return self_test(args.self_test)
    if not args.paths:
        parser.error("no files to check")
    floor = tuple(int(p) for p in args.floor.split("."))
    problems, count = check(args.paths, floor)
    for problem in problems:
        print(f"FAIL: {problem}")
    if not problems:
        print(f"ok: {count} binaries need glibc {args.floor} at most")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
