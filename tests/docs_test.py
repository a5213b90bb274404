#!/usr/bin/env python3
"""README.md and the manual in docs/.

    docs_test.py pages SOURCE_DIR
        README.md: at most 150 lines; it starts with the two commands that work on a fresh
        machine (`./scripts/setup.sh && ./scripts/demo.sh`, `./scripts/test.sh`, the one .ci/run
        runs); its first report starts within its first 60 lines and is a recorded testcase's
        golden report, byte for byte. docs/: every page is in mkdocs.yml's nav and reachable by
        links from docs/index.md. Every relative link of README.md and of the pages names a file
        that exists (the pages' links stay inside docs/, which is all MkDocs sees), and every
        #anchor into a Markdown file names one of its headings. Needs no MkDocs.
    docs_test.py site SOURCE_DIR MKDOCS SITE_DIR
        `mkdocs build --strict` of mkdocs.yml into SITE_DIR (a warning fails it: a broken link or
        anchor, a page left out of the nav), then every page's HTML and the HTML report's
        screenshot are there. Without MKDOCS (scripts/test.sh installs it, pinned, from PyPI into
        the build tree's test-tools; offline it cannot) it says so and exits 77 (skipped).
"""
import os
import re
import subprocess
import sys
import unicodedata

README_MAX_LINES = 150
REPORT_WITHIN = 60
COMMANDS = ("./scripts/setup.sh && ./scripts/demo.sh", "./scripts/test.sh")
GOLDENS = ("testcases/recorded/golden", "testcases/recorded-cuda12/golden")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def prose(text):
    """The text without fenced or indented code blocks and inline code spans."""
    text = FENCE.sub("", text)
    lines = [l for l in text.splitlines() if not l.startswith("    ") and not l.startswith("\t")]
    return re.sub(r"`[^`\n]*`", "", "\n".join(lines))


def slugify(heading):
    """Python-Markdown's toc slug of a heading (what MkDocs and its anchor check use)."""
    text = re.sub(r"[`*_]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(text):
    seen, out = {}, set()
    for line in FENCE.sub("", text).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = slugify(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}_{n}")
    return out


def links(path):
    """(target file, anchor or None) of each relative link in a Markdown file."""
    out = []
    for target in LINK.findall(prose(read(path))):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        file = os.path.normpath(os.path.join(os.path.dirname(path), file) if file else path)
        out.append((target, file, anchor or None))
    return out


def nav_pages(source):
    import yaml  # python3-yaml, which scripts/setup.sh installs
    with open(os.path.join(source, "mkdocs.yml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    pages = []

    def walk(node):
        if isinstance(node, str):
            pages.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config.get("nav", []))
    return config.get("docs_dir", "docs"), pages


def check_readme(source, problems):
    readme = read(os.path.join(source, "README.md"))
    lines = readme.splitlines()
    if len(lines) > README_MAX_LINES:
        problems.append(f"README.md has {len(lines)} lines, more than {README_MAX_LINES}")
    first_block = []
    for line in lines[1:]:
        if line.startswith("    "):
            first_block.append(line.strip())
        elif first_block or line.strip():
            break
    for command, line in zip(COMMANDS, first_block + [""] * len(COMMANDS)):
        if not line.startswith(command + " ") and line != command:
            problems.append(f"README.md does not start with `{command}` (its first lines: "
                            f"{first_block})")
    ci = read(os.path.join(source, ".ci", "run"))
    if f"exec {COMMANDS[1]}" not in ci:
        problems.append(".ci/run does not run the README's test command " + COMMANDS[1])
    fence = [i for i, l in enumerate(lines) if l.startswith("```")]
    if len(fence) < 2 or fence[0] + 1 > REPORT_WITHIN:
        problems.append(f"README.md's first report does not start within its first "
                        f"{REPORT_WITHIN} lines (its first ``` is at line "
                        f"{fence[0] + 1 if fence else None})")
        return
    report = "\n".join(lines[fence[0] + 1:fence[1]]) + "\n"
    goldens = [os.path.join(d, n) for d in GOLDENS if os.path.isdir(os.path.join(source, d))
               for n in os.listdir(os.path.join(source, d)) if n.endswith(".txt")]
    if not any(read(os.path.join(source, g)) == report for g in goldens):
        problems.append("README.md's first report is no recorded testcase's golden report "
                        "(testcases/recorded*/golden/*.txt): copy it from the golden again")


def check_pages(source, problems):
    docs_dir, nav = nav_pages(source)
    docs = os.path.join(source, docs_dir)
    pages = sorted(n for n in os.listdir(docs) if n.endswith(".md"))
    for page in pages:
        if page not in nav:
            problems.append(f"{docs_dir}/{page} is not in mkdocs.yml's nav")
    for page in nav:
        if page not in pages:
            problems.append(f"mkdocs.yml's nav names {page}, which {docs_dir}/ lacks")
    reached, todo = set(), ["index.md"]
    while todo:
        page = todo.pop()
        if page in reached or page not in pages:
            continue
        reached.add(page)
        for _, file, _ in links(os.path.join(docs, page)):
            if os.path.dirname(file) == os.path.normpath(docs) and file.endswith(".md"):
                todo.append(os.path.basename(file))
    for page in pages:
        if page not in reached:
            problems.append(f"{docs_dir}/{page} cannot be reached by links from index.md")
    for path in [os.path.join(source, "README.md")] + [os.path.join(docs, p) for p in pages]:
        name = os.path.relpath(path, source)
        for target, file, anchor in links(path):
            if name != "README.md" and not file.startswith(os.path.normpath(docs) + os.sep):
                problems.append(f"{name}: the link {target} leaves {docs_dir}/, where MkDocs "
                                "cannot follow it (name the file as code instead)")
            elif not os.path.exists(file):
                problems.append(f"{name}: the link {target} names no file")
            elif anchor and file.endswith(".md") and anchor not in anchors(read(file)):
                problems.append(f"{name}: the link {target}: no heading of "
                                f"{os.path.relpath(file, source)} has the anchor #{anchor}")
    return pages


def pages_main(source):
    problems = []
    check_readme(source, problems)
    pages = check_pages(source, problems)
    for problem in problems:
        print("FAIL:", problem)
    print(f"docs: README.md and {len(pages)} pages, {len(problems)} problems")
    return 1 if problems else 0


def site_main(source, mkdocs, site):
    if not os.access(mkdocs, os.X_OK):
        print(f"docs_site: skipped: {mkdocs} is missing (scripts/test.sh installs mkdocs and "
              "mkdocs-material from PyPI into the build tree; it could not, offline?)")
        return 77
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    built = subprocess.run([mkdocs, "build", "--strict", "--clean", "--config-file",
                            os.path.join(source, "mkdocs.yml"), "--site-dir", site],
                           env=env, capture_output=True, text=True)
    print(built.stdout + built.stderr)
    if built.returncode != 0:
        print(f"FAIL: mkdocs build --strict exited {built.returncode}")
        return 1
    _, nav = nav_pages(source)
    missing = [p for p in nav if not os.path.isfile(os.path.join(site, p[:-3] + ".html"))]
    missing += [p for p in ("html-report-unjoined-fork.png",)
                if not os.path.isfile(os.path.join(site, p))]
    for page in missing:
        print(f"FAIL: the site lacks {page}")
    print(f"docs_site: {len(nav)} pages built with --strict, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "pages":
        sys.exit(pages_main(sys.argv[2]))
    if len(sys.argv) == 5 and sys.argv[1] == "site":
        sys.exit(site_main(*sys.argv[2:]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
