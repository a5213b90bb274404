#!/usr/bin/env python3
"""The hostile corpus (docs/security.md): small inputs generated here, at test time,
each shaped as an attacker who controls a trace (and, for some, its directory) would shape it.
Every case runs `capguard report` under `ulimit -v` (512 MiB) and 10 s of CPU time (`ulimit -t`;
a case that blocks instead, on a FIFO say, is caught by a 60 s wall-clock limit, which a loaded
CI machine running other tests beside this one does not reach), with its
expected exit status, and every report it writes (text, JSON, SARIF, JUnit, HTML, DOT) is
checked: it parses, it holds no forged text, and no line of a file outside the source root
(the canary files below) ever appears in it.

    hostile_corpus.py PATH/TO/capguard [CASE...]
"""
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

MEMORY = 512 << 20
CPU_SECONDS = 10
MAX_OUTPUT = 256 << 20  # bytes of one report file: outputs are bounded too
TIMEOUT = 60  # wall clock: only a blocked (not a busy) capguard gets near it
CANARY = "CANARY-7f3a-must-never-be-published"
ENV_CANARY = "ENV-CANARY-19c4-must-never-be-published"
LEGIT = "LEGIT-LINE-MARKER"
# Every report format is written for every case: the names come from cli/formats.def.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "cli",
                       "formats.def"), encoding="utf-8") as _def:
    FORMATS = re.findall(r"^CAPGUARD_FORMAT\((\w+)\)", _def.read(), re.M)
EXTENSIONS = {"text": "txt", "junit": "xml"}  # the file names the checks below look for


def esc(text):
    """A trace string (trace/format.h): bytes outside 0x21..0x7e and '%' as %XX."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    return "".join(chr(b) if 0x21 <= b <= 0x7e and b != 0x25 else "%%%02X" % b for b in data)


def trace(pid=0x1E240, frames=(("src/app.py", 2, "main"),), modules=(), native=(), end=True,
          attach="i ok cupti", command="./app"):
    """A trace of one capture broken by a synchronize (an error finding), its stack `native`
    return addresses then the Python frames (file, line, function), innermost first."""
    lines = ["v 0.1.0 2", "p %x 1 0" % pid, "c " + esc(command), attach]
    for base, start, end_, path in modules:
        lines.append("m %x %x %x %s" % (base, start, end_, esc(path)))
    for i, (file, line, function) in enumerate(frames, start=1):
        lines.append("y %x %x %s %s" % (i, line, esc(file), esc(function)))
    entries = ["%x" % a for a in native]
    if frames:
        entries += ["y"] + ["%x" % i for i in range(1, len(frames) + 1)]
    lines.append("s 1 " + " ".join(entries))
    lines += ["e 1 a 1e241 cudaStreamBeginCapture 0 1 st=5000 sf=1 sb=0 sa=1 ci=1 md=0",
              "e 2 14 1e241 cudaStreamSynchronize 384 1 st=5000 sf=1 sb=1 sa=2 ci=1",
              "e 3 1e 1e241 cudaStreamEndCapture 385 0 st=5000 sf=1 sb=2 sa=0 ci=1"]
    if end:
        lines.append("z 28 0")
    return "\n".join(lines) + "\n"


class Case:
    def __init__(self, name, expect, setup, args=None, control=True, check=None, formats=None,
                 cpu_seconds=None):
        self.name, self.expect, self.setup, self.control = name, expect, setup, control
        self.args = args or (lambda d: [os.path.join(d, "traces")])
        self.check = check
        self.formats = formats or FORMATS  # the reports it writes: all of them unless said
        self.cpu_seconds = cpu_seconds or CPU_SECONDS


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def one(d, text, name="capguard.1.trace"):
    write(os.path.join(d, "traces", name), text)


FORGED = "ok\u202e\u2066x\u2028\x1b[2J\r\x00\x7f\ufffe\uffff [click](https://evil.example) SUMMARY: capguard: 0 errors"


def cases():
    return [
        # Source lines: a trace never chooses what local content is copied into a report.
        Case("python_frame_names_etc_passwd", 1, lambda d: one(d, trace(frames=[("/etc/passwd", 1, "f")]))),
        Case("python_frame_names_proc_environ", 1, lambda d: one(d, trace(frames=[("/proc/self/environ", 1, "f")]))),
        Case("python_frame_outside_root_canary", 1, lambda d: one(d, trace(frames=[(d + "/outside/secret.py", 1, "f")]))),
        Case("dotdot_out_of_root", 1, lambda d: one(d, trace(frames=[("src/../../outside/secret.py", 1, "f")]))),
        Case("symlink_in_root_to_outside", 1, lambda d: one(d, trace(frames=[("src/link.py", 1, "f")]))),
        Case("symlink_in_root_to_etc_hostname", 1, lambda d: one(d, trace(frames=[("src/hostname.py", 1, "f")]))),
        Case("hidden_directory_in_root", 1, lambda d: one(d, trace(frames=[(".hidden/secret.py", 1, "f")]))),
        Case("hidden_directory_by_path_tail", 1, lambda d: one(d, trace(frames=[("/ci/checkout/.hidden/secret.py", 1, "f")]))),
        Case("git_config_by_path_tail", 1, lambda d: one(d, trace(frames=[("/ci/checkout/.git/config", 1, "f")]))),
        Case("no_source_extension", 1, lambda d: one(d, trace(frames=[("src/notes.txt", 1, "f")]))),
        Case("fifo_named_as_source", 1, lambda d: one(d, trace(frames=[("src/fifo.py", 1, "f")]))),
        Case("sparse_2gb_source", 1, lambda d: one(d, trace(frames=[("src/sparse.py", 1, "f")]))),
        Case("newlines_source_far_line", 1, lambda d: one(d, trace(frames=[("src/newlines.py", 900000, "f")]))),
        # A source file whose first line is 15.9 MB, findings on 400 later lines (the
        # line was read again for each finding in each format, over 60 s).
        Case("source_huge_first_line", 1, setup_huge_first_line),
        Case("very_deep_path", 1, lambda d: one(d, trace(frames=[("/a" * 2000 + "/x.py", 1, "f")]))),
        # Files the symbolizer and the cache open: never block, regular files only.
        Case("module_record_names_fifo", 1, lambda d: one(d, trace(
            modules=[(0, 0x400000, 0x500000, d + "/fifo.so")], native=[0x401234]))),
        Case("module_record_names_directory", 1, lambda d: one(d, trace(
            modules=[(0, 0x400000, 0x500000, "/etc")], native=[0x401234]))),
        Case("symbols_companion_is_fifo", 1, setup_symbols_fifo),
        Case("debuglink_names_fifo", 1, setup_debuglink_fifo),
        # libdwfl's own search for a stripped module's debug data: the made-up
        # "<dir>/.debug/<name>", and "<target>.debug" beside a symlinked module's target.
        Case("debug_dir_names_fifo", 1, setup_debug_dir_fifo),
        Case("symlink_target_debug_fifo", 1, setup_symlink_target_fifo),
        Case("symbols_companion_names_etc_passwd", 1, setup_symbols_passwd),
        # Just under the byte cap, in short lines: frames are counted too (1.95 GB).
        Case("symbols_companion_short_lines", 1, setup_symbols_short_lines,
             check=lambda stderr: "frames; the rest are ignored" in stderr),
        Case("tests_companion_is_fifo", 1, setup_tests_fifo),
        Case("tests_companion_hostile", 1, setup_tests_hostile),
        Case("trace_is_fifo", 3, setup_trace_fifo, args=lambda d: [os.path.join(d, "traces", "x.trace")], control=False),
        Case("fifo_trace_in_directory", 1, setup_fifo_in_dir),
        # Output that nothing can forge.
        Case("forged_strings", 1, lambda d: one(d, trace(command=FORGED, frames=[
            ("src/app.py", 2, FORGED), ("/src/" + FORGED + ".py", 3, FORGED)]))),
        Case("invalid_utf8", 1, lambda d: write(os.path.join(d, "traces", "capguard.1.trace"),
                                                trace(command="x").replace("c x", "c %FF%C0%ED%A0%80%00"))),
        # Gates that fail closed.
        Case("not_attached", 3, lambda d: one(d, trace(attach="i failed no%20CUPTI", frames=[]))),
        Case("not_attached_then_ok", 3, lambda d: one(d, trace(attach="i failed x\ni ok cupti", frames=[]))),
        Case("no_end_record_clean", 3, lambda d: one(d, clean_trace(end=False))),
        Case("no_end_record_with_error", 1, lambda d: one(d, trace(end=False))),
        Case("output_names_input_trace", 2, lambda d: one(d, trace()),
             args=lambda d: ["-o", "json:" + os.path.join(d, "traces", "capguard.1.trace"),
                             os.path.join(d, "traces")], control=False),
        # A trace without any 'i' record never said capguard attached; -o naming the
        # pytest companion (an input); a stale companion written before the process started.
        Case("no_attach_record", 3, lambda d: one(d, trace().replace("i ok cupti\n", ""))),
        Case("output_names_input_tests", 2, setup_tests_companion,
             args=lambda d: ["-o", "junit:" + os.path.join(d, "traces", "capguard.1.tests"),
                             os.path.join(d, "traces")], control=False),
        Case("stale_tests_companion", 1, setup_stale_tests,
             check=lambda stderr: "stale-test-of-an-earlier-run" not in stderr and "SUMMARY" in stderr),
        # Earlier cases: truncations, flips, newer formats.
        Case("truncated", 3, lambda d: one(d, trace()[:150])),
        Case("newer_format", 3, lambda d: one(d, trace().replace("v 0.1.0 2", "v 9.0.0 99"))),
        Case("flipped_bytes", None, setup_flipped),
        Case("long_line", 3, lambda d: one(d, trace().replace("c ./app", "c " + "A" * (1 << 20)))),
        # Budgets: a memory ceiling on the analysis state, near-linear algorithms.
        Case("fork_chain_40k", 3, lambda d: one(d, fork_chain(40000))),
        Case("many_modules_many_findings", 1, lambda d: one(d, many_modules(500000, 10000))),
        Case("frees_against_graph_refs", 1, lambda d: one(d, frees_against_graph(20000, 6400))),
        # Each successful ...NodeSetParams scanned every reference (4M refs, 20k calls:
        # over 60 s); each allocation scanned every hit, each free every reference.
        Case("graph_set_params_many_refs", 0, lambda d: one(d, graph_set_params(40000, 50, 40000))),
        Case("graph_hits_then_allocations", 1, lambda d: one(d, graph_hits_then_allocations(500, 1000, 60000, 200000))),
        # PyTorch's allocator events (trace/framework_memory.def) forged: 300k frees and reuses of
        # one held block (hits bounded per exec), 300k for memory no exec holds (a warning).
        Case("framework_free_flood", 1, lambda d: one(d, framework_free_flood(300000)),
             check=lambda stderr: "framework allocator events for memory no live graph held" in stderr),
        # 3M graph nodes with kernel names (10M took 1.6 GB, 128 bytes and a string a
        # node): 40 bytes a node, names kept once, at most 2M nodes a process (a warning).
        Case("graph_nodes_3m", 0, lambda d: one(d, graph_nodes(3000000)),
             check=lambda stderr: "graph node records past the analysis's limit" in stderr),
        Case("deep_inline_chain_800", 1, setup_deep_inline_chain,
             check=lambda stderr: "nested deeper than" in stderr),
        Case("compressed_debug_bomb", 1, setup_compressed_debug_bomb,
             check=lambda stderr: "compressed debug sections would inflate" in stderr),
        Case("many_processes", 1, lambda d: [one(d, trace(pid=0x1000 + i), "capguard.%d.trace" % i)
                                             for i in range(15000)]),
        # 50,000 traces in the formats CI gates with (100,000 took 854 MB, JUnit's
        # document built whole and every trace's analysis held to the end; 372 MB now): within
        # the memory limit, and the CPU time of a minute the wall clock allows anyway.
        Case("many_processes_50k", 1, lambda d: [one(d, trace(pid=0x1000 + i), "capguard.%d.trace" % i)
                                                 for i in range(50000)],
             formats=("text", "json", "sarif", "junit"), cpu_seconds=TIMEOUT),
        # Pictures bounded per capture and in all (8.6 GB and 4.4 GB of HTML before).
        Case("forks_and_escapes_1500", 0, lambda d: one(d, forks_and_escapes(1500, 1500))),
        Case("clean_captures_1m_distinct_sites", 0, lambda d: one(d, clean_captures(1000000))),
        # Each on a stream and a thread of its own (1.2 GB, each kept an entry).
        Case("clean_captures_1m_distinct_threads", 0, lambda d: one(d, clean_captures_threads(1000000))),
        # Capture rehearsal: bounded regions and open ranges (past them: not judged, exit 3), and
        # near-linear verdict lists however many call sites break a region.
        Case("rehearse_1m_distinct_regions", 3, lambda d: one(d, rehearsed_regions(1000000, close=True))),
        Case("rehearse_1m_ranges_never_closed", 3, lambda d: one(d, rehearsed_regions(1000000, close=False))),
        Case("rehearse_100k_distinct_sites", 1, lambda d: one(d, rehearsed_sites(100000))),
        # Crafted --rehearse globs ('q' records) against long region names: a backtracking
        # matcher took text x pattern steps for each (over 60 s). No glob matches:
        # each region is named never executed, so the analysis is incomplete (exit 3).
        # Made-up API names: 17 traces of 4,096 each filled a table shared by all traces (65,536
        # names), and a later trace's events were refused, its finding lost (exit 3; with -j 2
        # the report changed from run to run). Each trace keeps its own names now.
        Case("api_names_17_traces_of_4096", 1, lambda d: made_up_api_names(d, 17, 4096),
             check=lambda stderr: "1 error," in stderr and "API names" not in stderr),
        Case("api_names_17_traces_of_4096_j2", 1, lambda d: made_up_api_names(d, 17, 4096),
             args=lambda d: ["-j", "2", os.path.join(d, "traces")],
             check=lambda stderr: "1 error," in stderr and "API names" not in stderr),
        # One trace naming more than a trace may: that trace is damaged (exit 3), the other's
        # finding stays.
        Case("api_names_past_one_traces_cap", 3, lambda d: made_up_api_names(d, 1, 4097),
             check=lambda stderr: "1 error," in stderr and "more than 4096 distinct API names in one trace" in stderr
             and stderr.count("capguard.100.trace") >= 1 and "capguard.999.trace" not in stderr),
        Case("rehearse_crafted_globs", 3, lambda d: [one(d, crafted_globs(4096, 64, t), "capguard.%d.trace" % t)
                                                     for t in range(10)]),
    ]


def made_up_api_names(d, traces, names):
    """`traces` traces, each of `names` calls of distinct made-up API names, then (read last) a
    trace with a real finding."""
    for t in range(traces):
        lines = ["v 0.1.0 2", "p %x 1 0" % (0x2000 + t), "c ./app", "i ok cupti"]
        lines += ["e %x %x 1e241 madeUp%02d_%05d 0 0" % (i + 1, i + 1, t, i) for i in range(names)]
        one(d, "\n".join(lines + ["z 28 0"]) + "\n", "capguard.%d.trace" % (100 + t))
    one(d, trace(), "capguard.999.trace")


def forks_and_escapes(forks, escapes):
    """One capture into which `forks` streams are forked (never joined back) and during which
    `escapes` launches from call sites of their own go to a stream outside it: every finding's
    picture drew every stream and every escape (quadratic output)."""
    out = ["v 0.1.0 2\np 1e240 1 0\nc ./app\ni ok cupti\ns 1 401234\n"
           "e 1 a 1e241 cudaStreamBeginCapture 0 1 st=5000 sf=1 sb=0 sa=1 ci=1 md=0\n"]
    seq = 2
    for k in range(1, forks + 1):
        out.append("e %x a 1e241 cudaEventRecord 0 1 st=5000 ev=%x\n"
                   "e %x a 1e241 cudaStreamWaitEvent 0 1 st=%x ev=%x fl=0\n"
                   % (seq, 0x9000 + k, seq + 1, 0x100000 + k, 0x9000 + k))
        seq += 2
    for j in range(escapes):
        out.append("s %x %x\ne %x a 1e241 cudaLaunchKernel 0 %x st=7000 sa=0\n"
                   % (j + 2, 0x402000 + 16 * j, seq, j + 2))
        seq += 1
    out.append("e %x a 1e241 cudaStreamEndCapture 0 1 st=5000 sf=1 sb=1 sa=0 ci=1 gr=77 nd=1\nz 28 0\n" % seq)
    return "".join(out)


def rehearsed_regions(n, close):
    """n rehearsed ranges (format 6 'r'/'R'), each with a launch: closed, each a region of its own
    name; or never closed, all one region (a linear scan per range or per call was quadratic)."""
    out = ["v 0.1.0 6\np 1e240 1 0\nc ./app\ni ok cupti\n"
           "e 1 1 1e241 cudaStreamCreateWithFlags 0 0 st=5000 fl=1\n"]
    seq = 2
    for i in range(1, n + 1):
        name = "region%d" % i if close else "step"
        out.append("r %x 1 1e241 %x  %s\ne %x 2 1e241 cudaLaunchKernel 0 0 st=5000\n"
                   % (seq, i, name, seq + 1))
        if close:
            out.append("R %x 3 1e241 %x\n" % (seq + 2, i))
        seq += 3
    out.append("z 3 0\n")
    return "".join(out)


def crafted_globs(regions, globs, salt):
    """`regions` closed ranges with long names of 'a's (the recorder cuts names and globs at 256
    bytes) and `globs` 'q' records of many stars and a long last piece that never matches."""
    out = ["v 0.1.0 6\np %x 1 0\nc ./app\ni ok cupti\n" % (0x1e240 + salt)]
    for g in range(globs):
        out.append("q " + "*a" * 20 + "*" + "a" * (150 + g) + "b*\n")
    for i in range(1, regions + 1):
        name = "a" * 240 + "%d_%d" % (salt, i)
        out.append("r %x 1 1e241 %x  %s\nR %x 3 1e241 %x\n" % (2 * i, i, name, 2 * i + 1, i))
    out.append("z 3 0\n")
    return "".join(out)


def rehearsed_sites(n):
    """One rehearsed execution with n allocations, each from a call site of its own: n findings
    and n verdict items (merging them by user line was quadratic)."""
    out = ["v 0.1.0 6\np 1e240 1 0\nc ./app\ni ok cupti\nr 1 1 1e241 1  step\n"]
    for i in range(1, n + 1):
        out.append("s %x %x\ne %x 2 1e241 cudaMalloc 0 %x\n" % (i, 0x401000 + 16 * i, i + 1, i))
    out.append("R %x 3 1e241 1\nz 3 0\n" % (n + 2))
    return "".join(out)


def clean_captures(n):
    """n clean captures, each begun from a site of its own (1.3 GB of analysis state before
    clean captures past 4096 sites shared one report entry)."""
    out = ["v 0.1.0 4\np 1e240 1 0\nc ./app\ni ok cupti\n"]
    for i in range(1, n + 1):
        out.append("s %x %x\ne %x 1 1e241 cudaStreamBeginCapture 0 %x st=5000 ci=%x md=0\n"
                   "e %x 2 1e241 cudaStreamEndCapture 0 %x st=5000 ci=%x\n"
                   % (i, 0x401000 + 16 * i, 2 * i - 1, i, i, 2 * i, i, i))
    out.append("z 3 0\n")
    return "".join(out)


def clean_captures_threads(n):
    out = ["v 0.1.0 4\np 1e240 1 0\nc ./app\ni ok cupti\ns 1 401000\n"]
    for i in range(1, n + 1):
        out.append("e %x 1 %x cudaStreamBeginCapture 0 1 st=%x ci=%x md=0\n"
                   "e %x 2 %x cudaStreamEndCapture 0 1 st=%x ci=%x\n"
                   % (2 * i - 1, 0x100000 + i, 0x5000 + i, i, 2 * i, 0x100000 + i, 0x5000 + i, i))
    out.append("z 3 0\n")
    return "".join(out)


def fork_chain(n):
    """One capture into which n streams are forked, each from the stream forked before it: the
    replay's vector clocks, one entry per member each, would be quadratic (40k: 3.2 GB)."""
    lines = ["v 0.1.0 2", "p 1e240 1 0", "c ./app", "i ok cupti", "s 1 401234",
             "e 1 a 1e241 cudaStreamBeginCapture 0 1 st=5000 sf=1 sb=0 sa=1 ci=1 md=0"]
    seq = 2
    for k in range(1, n + 1):
        lines.append("e %x a 1e241 cudaEventRecord 0 1 st=%x ev=%x" % (seq, 0x5000 + k - 1, 0x9000 + k))
        lines.append("e %x a 1e241 cudaStreamWaitEvent 0 1 st=%x ev=%x fl=0" % (seq + 1, 0x5000 + k, 0x9000 + k))
        seq += 2
    lines.append("e %x a 1e241 cudaStreamEndCapture 0 1 st=5000 sf=1 sb=1 sa=0 ci=1 gr=77 nd=1" % seq)
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def many_modules(modules, findings):
    """`modules` module records and `findings` captures broken by a synchronize, each from its own
    return address, outside every module: a linear module lookup per address is quadratic."""
    lines = ["v 0.1.0 2", "p 1e240 1 0", "c ./app", "i ok cupti"]
    for i in range(modules):
        base = 0x10000000 + i * 0x1000
        lines.append("m %x %x %x /nonexistent/m%d.so" % (base, base, base + 0x1000, i))
    seq = 1
    for k in range(findings):
        stream = 0x5000 + k
        lines.append("s %x %x" % (k + 1, 0x1000 + k))
        lines += ["e %x a 1e241 cudaStreamBeginCapture 0 %x st=%x sf=1 sb=0 sa=1 ci=%x md=0" % (seq, k + 1, stream, k + 1),
                  "e %x 14 1e241 cudaStreamSynchronize 384 %x st=%x sf=1 sb=1 sa=2 ci=%x" % (seq + 1, k + 1, stream, k + 1),
                  "e %x 1e 1e241 cudaStreamEndCapture 385 %x st=%x sf=1 sb=2 sa=0 ci=%x" % (seq + 2, k + 1, stream, k + 1)]
        seq += 3
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def frees_against_graph(nodes, frees):
    """An exec whose `nodes` nodes all use one block, then `frees` frees of that block and a
    replay: each free was checked against every node and every earlier hit (cubic)."""
    lines = ["v 0.1.0 3", "p 1e240 1 0", "c ./app", "i ok cupti", "s 1 401234",
             "e 1 a 1e241 cudaMalloc 0 1 dm=0 pt=7f0000000000 sz=100000",
             "e 2 a 1e241 cudaGraphInstantiate 0 1 gr=55 gx=77 dm=0"]
    for i in range(nodes):
        lines.append("g 77 %x 0 0 k a0:%x" % (i, 0x7f0000000000 + 8 * (i % 0x2000)))
    lines.append("G 77 55 %x 0 1 1" % nodes)
    seq = 3
    for k in range(frees):
        lines.append("e %x a 1e241 cudaFree 0 1 dm=0 pt=7f0000000000 sz=100000" % seq)
        seq += 1
    lines.append("e %x a 1e241 cudaGraphLaunch 0 1 st=5000 gx=77 dm=0" % seq)
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def graph_exec_records(nodes, refs_per_node):
    """Exec 77: `nodes` nodes of `refs_per_node` kernel arguments each, all distinct addresses."""
    lines = ["e 2 a 1e241 cudaGraphInstantiate 0 1 gr=55 gx=77 dm=0"]
    for n in range(nodes):
        refs = " ".join("a%x:%x" % (i, 0x7f0000000000 + 0x1000 * (n * refs_per_node + i))
                        for i in range(refs_per_node))
        lines.append("g 77 %x 0 0 k %s" % (n, refs))
    lines.append("G 77 55 %x 0 1 1" % nodes)
    return lines


def graph_set_params(nodes, refs_per_node, calls):
    lines = ["v 0.1.0 3", "p 1e240 1 0", "c ./app", "i ok cupti", "s 1 401234"]
    lines += graph_exec_records(nodes, refs_per_node)
    seq = 3
    for k in range(calls):
        lines.append("e %x a 1e241 cudaGraphExecKernelNodeSetParams 0 1 gx=77 ni=%x" % (seq, k % nodes))
        seq += 1
    lines.append("e %x a 1e241 cudaGraphLaunch 0 1 st=5000 gx=77 dm=0" % seq)
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def graph_hits_then_allocations(nodes, refs_per_node, frees, allocations):
    """Frees of `frees` blocks the exec's nodes hold (a hit each), then `allocations` elsewhere,
    then a launch: a replay after free."""
    lines = ["v 0.1.0 3", "p 1e240 1 0", "c ./app", "i ok cupti", "s 1 401234"]
    lines += graph_exec_records(nodes, refs_per_node)
    seq = 3
    for k in range(frees):
        lines.append("e %x a 1e241 cudaFree 0 1 dm=0 pt=%x" % (seq, 0x7f0000000000 + 0x1000 * k))
        seq += 1
    for k in range(allocations):
        lines.append("e %x a 1e241 cudaMalloc 0 1 dm=0 pt=%x sz=100" % (seq, 0x10000000 + 0x1000 * k))
        seq += 1
    lines.append("e %x a 1e241 cudaGraphLaunch 0 1 st=5000 gx=77 dm=0" % seq)
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def graph_nodes(nodes):
    """One exec walked with `nodes` kernel nodes of 64 long (mangled-length) names, launched."""
    head = "v 0.1.0 3\np 1e240 1 0\nc ./app\ni ok cupti\ns 1 401234\n" \
        "e 2 a 1e241 cudaGraphInstantiate 0 1 gr=55 gx=77 dm=0\n"
    body = "".join("g 77 %x 0 0 _ZN7cutlass6KernelINS_4gemm6kernel4GemmE%d\n" % (i, i % 64)
                   for i in range(nodes))
    return head + body + "G 77 55 %x 0 1 1\ne 3 b 1e241 cudaGraphLaunch 0 1 st=5000 gx=77 dm=0\n" \
        "z 28 0\n" % nodes


def framework_free_flood(count):
    lines = ["v 0.1.0 8", "p 1e240 1 0", "c ./app", "i ok cupti", "s 1 401234"]
    lines += graph_exec_records(4, 4)
    seq = 3
    for k in range(count):
        lines.append("e %x a 1e241 torch.CUDACachingAllocator.free 0 1 st=0 pt=7f0000000000 sz=1000" % seq)
        lines.append("e %x a 1e241 torch.CUDACachingAllocator.alloc 0 1 st=0 pt=7f0000000000 sz=1000" % (seq + 1))
        lines.append("e %x a 1e241 torch.CUDACachingAllocator.free 0 1 st=0 pt=%x sz=1000" % (seq + 2, 0x10000000 + 0x1000 * k))
        seq += 3
    lines.append("e %x a 1e241 cudaGraphLaunch 0 1 st=5000 gx=77 dm=0" % seq)
    lines.append("z 28 0")
    return "\n".join(lines) + "\n"


def setup_compressed_debug_bomb(d):
    """A module whose compressed debug section says it inflates to 1 GiB (the header libdw
    believes): the symbolizer must refuse it before libdw inflates anything."""
    import struct
    src, elf = os.path.join(d, "bomb.c"), os.path.join(d, "bomb.so")
    write(src, "int bomb(int x) { return x * 3 + 1; }\n")
    ok = shutil.which("cc") and shutil.which("objcopy") and subprocess.run(
        ["cc", "-g", "-O1", "-shared", "-fPIC", "-o", elf, src]).returncode == 0 and subprocess.run(
        ["objcopy", "--compress-debug-sections=zlib-gabi", elf]).returncode == 0
    if ok:
        data = bytearray(open(elf, "rb").read())
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        for i in range(shnum):
            flags, = struct.unpack_from("<Q", data, shoff + i * shentsize + 8)
            offset, = struct.unpack_from("<Q", data, shoff + i * shentsize + 24)
            if flags & 0x800:  # SHF_COMPRESSED: Elf64_Chdr ch_type, ch_reserved, ch_size
                struct.pack_into("<Q", data, offset + 8, 1 << 30)
        open(elf, "wb").write(bytes(data))
    one(d, trace(modules=[(0x400000, 0x400000, 0x500000, elf)], native=[0x401010]))
    return ok


def setup_debuglink_fifo(d):
    """A module whose .gnu_debuglink names a FIFO beside it: libdwfl would open it and block."""
    src, elf, debug = os.path.join(d, "dl.c"), os.path.join(d, "dl.so"), os.path.join(d, "dl.debug")
    write(src, "int dl(int x) { return x * 3 + 1; }\n")
    ok = shutil.which("cc") and shutil.which("objcopy") and all(subprocess.run(c).returncode == 0 for c in (
        ["cc", "-g", "-O1", "-shared", "-fPIC", "-o", elf, src],
        ["objcopy", "--only-keep-debug", elf, debug],
        ["objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, elf]))
    if ok:
        os.remove(debug)
        os.mkfifo(debug)
    one(d, trace(modules=[(0x400000, 0x400000, 0x500000, elf)], native=[0x401010]))
    return ok


def stripped_module(d, name):
    """A small shared object without its DWARF (no debuglink): libdwfl looks for it by name."""
    src, elf = os.path.join(d, name + ".c"), os.path.join(d, name)
    write(src, "int f(int x) { return x * 3 + 1; }\n")
    ok = shutil.which("cc") and shutil.which("objcopy") and all(subprocess.run(c).returncode == 0 for c in (
        ["cc", "-g", "-O1", "-shared", "-fPIC", "-o", elf, src], ["objcopy", "--strip-debug", elf]))
    return elf if ok else None


def setup_debug_dir_fifo(d):
    elf = stripped_module(d, "dd.so")
    if elf:
        os.makedirs(os.path.join(d, ".debug"))
        os.mkfifo(os.path.join(d, ".debug", "dd.so"))  # the name libdwfl also tries, alone
    one(d, trace(modules=[(0x400000, 0x400000, 0x500000, os.path.join(d, "dd.so"))], native=[0x401010]))
    return bool(elf)


def setup_symlink_target_fifo(d):
    os.makedirs(os.path.join(d, "lib"))
    os.makedirs(os.path.join(d, "link"))
    elf = stripped_module(os.path.join(d, "lib"), "real.so")
    if elf:
        os.mkfifo(elf + ".debug")
        os.symlink(elf, os.path.join(d, "link", "sym.so"))
    one(d, trace(modules=[(0x400000, 0x400000, 0x500000, os.path.join(d, "link", "sym.so"))],
                 native=[0x401010]))
    return bool(elf)


def setup_deep_inline_chain(d):
    """A module in which 800 functions are inlined into each other, a stack address in the
    innermost: walking its DWARF scopes took cubic time (800 levels: 15 s) before the cut."""
    src, elf = os.path.join(d, "deep.c"), os.path.join(d, "deep.so")
    n = 800
    lines = ["volatile int sink;", "__attribute__((noinline)) void leaf(void) { sink++; }",
             "static inline __attribute__((always_inline)) void f%d(void) { leaf(); sink++; }" % n]
    lines += ["static inline __attribute__((always_inline)) void f%d(void) { f%d(); sink++; }"
              % (i, i + 1) for i in range(n - 1, -1, -1)]
    lines.append("int deep(void) { f0(); return sink; }")
    write(src, "\n".join(lines) + "\n")
    ok = shutil.which("cc") and subprocess.run(["cc", "-g", "-O2", "-shared", "-fPIC", "-o", elf, src]).returncode == 0
    address = 0
    if ok:  # the return address of deep's call to leaf, inside all 800 inline scopes
        dump = subprocess.run(["objdump", "-d", elf], capture_output=True, text=True).stdout
        body = dump[dump.index("<deep>:"):]
        call = re.search(r"^\s*([0-9a-f]+):.*call.*<leaf", body, re.M)
        nxt = re.search(r"^\s*([0-9a-f]+):", body[call.end():], re.M)
        address = int(nxt.group(1), 16)
    one(d, trace(modules=[(0x400000, 0x400000, 0x500000, elf)], native=[0x400000 + address]))
    return ok


def clean_trace(end=True):
    text = "v 0.1.0 2\np 1e240 1 0\nc ./app\ni ok cupti\n"
    return text + ("z 28 0\n" if end else "")


def setup_symbols_fifo(d):
    one(d, trace(modules=[(0, 0x400000, 0x500000, "/nonexistent/app")], native=[0x401234]))
    os.mkfifo(os.path.join(d, "traces", "capguard.1.trace.symbols"))


def setup_symbols_passwd(d):
    one(d, trace(modules=[(0, 0x400000, 0x500000, "/nonexistent/app")], native=[0x401234], frames=[]))
    write(os.path.join(d, "traces", "capguard.1.trace.symbols"),
          "capguard-symbols\t1\n1e240\t401234\t1\t/nonexistent/app\tmain\t/etc/passwd\n"
          "1e240\t401234\t1\t/nonexistent/app\tmain\t%s/outside/secret.py\n" % d)


def setup_symbols_short_lines(d):
    one(d, trace(modules=[(0, 0x400000, 0x500000, "/nonexistent/app")], native=[0x401234]))
    with open(os.path.join(d, "traces", "capguard.1.trace.symbols"), "w") as f:
        f.write("capguard-symbols\t1\n")
        f.write("".join("1\t%x\t1\tm\tf\tx\n" % i for i in range(0x100000, 0x100000 + 3000000)))


def setup_tests_companion(d):
    one(d, trace())
    write(os.path.join(d, "traces", "capguard.1.tests"), "capguard-test-begin 1 123456 t\n")


def setup_stale_tests(d):
    """A trace of a process started now and a .tests of its pid last written long before."""
    import time
    one(d, trace().replace("p 1e240 1 0", "p 1e240 1 %x" % time.time_ns()))
    path = os.path.join(d, "traces", "capguard.1.tests")
    write(path, "capguard-test-begin 1 123456 stale-test-of-an-earlier-run\n")
    os.utime(path, (946684800, 946684800))


def setup_huge_first_line(d):
    with open(os.path.join(d, "root", "src", "longline.py"), "w") as f:
        f.write("x" * (15900 << 10) + "\n" + "".join("y = %d\n" % i for i in range(500)))
    lines = ["v 0.1.0 2", "p 1e240 1 0", "c ./app", "i ok cupti"]
    seq = 1
    for k in range(1, 401):
        lines.append("y %x %x src/longline.py f" % (k, k + 1))
        lines.append("s %x y %x" % (k, k))
        lines += ["e %x a 1e241 cudaStreamBeginCapture 0 %x st=%x sf=1 sb=0 sa=1 ci=%x md=0" % (seq, k, 0x5000 + k, k),
                  "e %x 14 1e241 cudaStreamSynchronize 384 %x st=%x sf=1 sb=1 sa=2 ci=%x" % (seq + 1, k, 0x5000 + k, k),
                  "e %x 1e 1e241 cudaStreamEndCapture 385 %x st=%x sf=1 sb=2 sa=0 ci=%x" % (seq + 2, k, 0x5000 + k, k)]
        seq += 3
    lines.append("z 28 0")
    one(d, "\n".join(lines) + "\n")


def setup_tests_fifo(d):
    one(d, trace())
    os.mkfifo(os.path.join(d, "traces", "capguard.1.tests"))


def setup_tests_hostile(d):
    """The pytest plugin's marks (engine/test_marks.h), written by anyone: a forged node id over
    the synchronize, an overlong line, out-of-order and malformed lines, more tests than named."""
    one(d, trace())
    lines = ["capguard-test-begin 1 123456 " + FORGED,
             "capguard-test-begin 2 123456 " + "A" * (1 << 20),
             "capguard-test-begin 0 123456 back-in-time", "capguard-test-end x 123456 y", "\x00"]
    lines += ["capguard-test-begin %d 123456 t%d" % (100 + i, i) for i in range(120000)]
    write(os.path.join(d, "traces", "capguard.1.tests"), "\n".join(lines) + "\n")


def setup_trace_fifo(d):
    os.makedirs(os.path.join(d, "traces"))
    os.mkfifo(os.path.join(d, "traces", "x.trace"))


def setup_fifo_in_dir(d):
    one(d, trace())
    os.mkfifo(os.path.join(d, "traces", "y.trace"))


def setup_flipped(d):
    data = bytearray(trace().encode())
    for i in range(7, len(data), 13):
        data[i] ^= 0x5A
    write(os.path.join(d, "traces", "capguard.1.trace"), bytes(data), "wb")


def make_tree(d):
    """The source root (the current directory of every run) and, outside it, the canaries."""
    root = os.path.join(d, "root")
    write(os.path.join(root, "src", "app.py"), "# line 1\n%s = 1  # line 2\n# line 3\n" % LEGIT)
    write(os.path.join(root, "src", "notes.txt"), CANARY + "\n")
    write(os.path.join(root, ".hidden", "secret.py"), CANARY + "\n")
    write(os.path.join(root, ".git", "config"), CANARY + "\n")
    write(os.path.join(d, "outside", "secret.py"), CANARY + "\n")
    os.symlink(os.path.join(d, "outside", "secret.py"), os.path.join(root, "src", "link.py"))
    os.symlink("/etc/hostname", os.path.join(root, "src", "hostname.py"))
    os.mkfifo(os.path.join(root, "src", "fifo.py"))
    os.mkfifo(os.path.join(d, "fifo.so"))
    with open(os.path.join(root, "src", "sparse.py"), "wb") as f:
        f.truncate(2 << 30)
    with open(os.path.join(root, "src", "newlines.py"), "wb") as f:
        f.write(b"\n" * (15 << 20))
    return root


def limit(cpu_seconds=CPU_SECONDS):
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))


def forbidden_lines():
    """Lines of files outside the source root that must never reach a report."""
    lines = [CANARY, ENV_CANARY]
    for path in ("/etc/passwd", "/etc/hostname"):
        try:
            with open(path, errors="replace") as f:
                lines += [l.strip() for l in f if len(l.strip()) >= 8]
        except OSError:
            pass
    return lines


def sarif_validator():
    """The SARIF 2.1.0 schema (docs/) as a validator; None, said once, without jsonschema."""
    try:
        import jsonschema
    except ImportError:
        print("note: python3 module 'jsonschema' missing: SARIF outputs are parsed, not validated")
        return None
    schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                               "sarif-2.1.0.schema.json")
    with open(schema_path, encoding="utf-8") as f:
        return jsonschema.Draft4Validator(json.load(f))


SARIF_VALIDATOR = sarif_validator()


def check_outputs(case, d, out, forbidden):
    problems = []
    text = open(os.path.join(out, "r.txt"), "rb").read() if os.path.exists(os.path.join(out, "r.txt")) else b""
    for name in sorted(os.listdir(out)):
        if os.path.getsize(os.path.join(out, name)) > MAX_OUTPUT:
            problems.append(f"{name}: {os.path.getsize(os.path.join(out, name))} bytes, over {MAX_OUTPUT}")
            continue
        data = open(os.path.join(out, name), "rb").read()
        try:
            s = data.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.append(f"{name}: invalid UTF-8: {e}")
            continue
        for line in forbidden:
            if line in s:
                problems.append(f"{name}: holds a line of a file outside the source root: {line[:40]!r}")
        if name != "r.html":  # HTML may show escaped text, never raw controls either
            pass
        for bad in ("\u202e", "\u2066", "\u2028", "\x1b", "\x00", "\r"):
            if bad in s:
                problems.append(f"{name}: holds raw {bad!r}")
        if name.endswith(".json") or name.endswith(".sarif"):
            try:
                doc = json.loads(s)
            except ValueError as e:
                problems.append(f"{name}: not JSON: {e}")
                continue
            if name.endswith(".sarif"):
                if SARIF_VALIDATOR is not None:
                    problems += [f"{name}: SARIF schema: {e.message[:200]}"
                                 for e in list(SARIF_VALIDATOR.iter_errors(doc))[:3]]
                for run in doc.get("runs", []):
                    for result in run.get("results", []):
                        if "[click](" in result["message"]["text"]:
                            problems.append(f"{name}: a link from the trace in message.text")
        if name.endswith(".xml"):
            try:
                ET.fromstring(data)
            except ET.ParseError as e:
                problems.append(f"{name}: not well-formed XML: {e}")
            if "\ufffe" in s or "\uffff" in s:
                problems.append(f"{name}: holds U+FFFE/U+FFFF")
        if name.endswith(".dot") and shutil.which("dot"):
            proc = subprocess.run(["dot", "-Tsvg"], input=data, capture_output=True, timeout=TIMEOUT)
            if proc.returncode != 0:
                problems.append(f"{name}: dot -Tsvg refuses it: {proc.stderr[:200]!r}")
    if case.control and case.expect == 1 and LEGIT.encode() not in text and case.name in CONTROLS:
        problems.append("the control source line (src/app.py:2, under the root) is not shown: "
                        "the check for outside lines would prove nothing")
    return problems


# Cases whose trace names src/app.py:2: the text report must show that line.
CONTROLS = {"forged_strings"}


def run_case(capguard, case, base, forbidden):
    d = os.path.join(base, case.name)
    os.makedirs(d)
    root = make_tree(d)
    if case.setup(d) is False:
        return None  # the tools it needs are missing here
    out = os.path.join(d, "out")
    os.makedirs(out)
    outputs = []
    if case.name != "output_names_input_trace":
        for name in case.formats:
            outputs += ["-o", f"{name}:" + os.path.join(out, "r." + EXTENSIONS.get(name, name))]
    command = [capguard, "report"] + outputs + case.args(d)
    env = dict(os.environ, HOSTILE_CANARY=ENV_CANARY)
    before = open(os.path.join(d, "traces", "capguard.1.trace"), "rb").read() \
        if os.path.isfile(os.path.join(d, "traces", "capguard.1.trace")) else None
    try:
        proc = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=TIMEOUT,
                              preexec_fn=lambda: limit(case.cpu_seconds))
    except subprocess.TimeoutExpired:
        return [f"did not finish within {TIMEOUT} s"]
    problems = []
    if proc.returncode == -24:  # SIGXCPU
        return [f"used more than {case.cpu_seconds} s of CPU time"]
    if case.expect is not None and proc.returncode != case.expect:
        problems.append(f"exit {proc.returncode}, expected {case.expect}; stderr: "
                        f"{proc.stderr.decode(errors='replace')[-600:]}")
    if case.expect is None and proc.returncode not in (0, 1, 3):
        problems.append(f"exit {proc.returncode}; stderr: {proc.stderr.decode(errors='replace')[-600:]}")
    stderr = proc.stderr.decode("utf-8", errors="replace")
    for line in forbidden:
        if line in stderr:
            problems.append(f"stderr holds a line of a file outside the source root: {line[:40]!r}")
    for bad in ("\u202e", "\u2028", "\x1b", "\x00"):
        if bad in stderr:
            problems.append(f"stderr holds raw {bad!r}")
    if before is not None and open(os.path.join(d, "traces", "capguard.1.trace"), "rb").read() != before:
        problems.append("an input trace was changed")
    if "out of memory" in stderr or proc.returncode in (-9, 137):
        problems.append("ran out of memory")
    if case.check and not case.check(stderr):
        problems.append("stderr lacks the expected message: " + stderr[-600:])
    problems += check_outputs(case, d, out, forbidden)
    return problems


def run_cases(capguard, base):
    """`capguard run` with a program that plants things in its own trace directory."""
    failed = 0
    d = os.path.join(base, "run")
    os.makedirs(d)
    td = os.path.join(d, "td")
    victim = os.path.join(d, "victim")
    write(victim, "precious\n")
    write(os.path.join(d, "t.trace"), trace())
    write(os.path.join(d, "chain.trace"), fork_chain(40000))
    full = trace()
    cut = full.index("e 1 ")
    write(os.path.join(d, "part1"), full[:cut])
    write(os.path.join(d, "part2"), full[cut:])
    background = ("sh -c 'T=\"$CAPGUARD_TRACE_DIR/capguard.$$.trace\"; cat %s > \"$T\"; sleep %%s; "
                  "cat %s >> \"$T\"' </dev/null >/dev/null 2>&1 & "
                  # The program exits once its background process has begun its trace, as a traced
                  # process does at start-up (under load the shell might not have run yet).
                  "while [ ! -s \"$CAPGUARD_TRACE_DIR/capguard.$!.trace\" ]; do sleep 0.05; done"
                  % (os.path.join(d, "part1"),
                                                                    os.path.join(d, "part2")))
    cases = [
        # A FIFO named *.trace in run's trace directory: refused, not waited on forever.
        ("run_fifo_in_trace_dir", 3, "mkfifo \"$CAPGUARD_TRACE_DIR/capguard.999.trace\""),
        # <trace>.symbols planted as a symlink to someone else's file: refused, file untouched.
        # A capture past the replay's memory budget: analyzed in part, and run exits 3 too.
        # (--no-require-attach: where no CUDA driver is, attaching fails and run exits 3 anyway.)
        ("run_fork_chain_incomplete", 3,
         "cp %s \"$CAPGUARD_TRACE_DIR/capguard.6.trace\"" % os.path.join(d, "chain.trace"),
         ["--no-require-attach"]),
        # A background process of the program makes its mistake after the program exited: run
        # waits for it (its trace has no end record yet, its pid runs) and reports the finding.
        ("run_background_finding", 1, background % 1, ["--no-require-attach"]),
        # A background process that has written no trace yet when the program exits:
        # run waits for every process of the program, traced or not, and reports its finding.
        ("run_background_untraced_yet", 1,
         "(sleep 0.8; cp %s \"$CAPGUARD_TRACE_DIR/capguard.77.trace\") </dev/null >/dev/null 2>&1 & true"
         % os.path.join(d, "t.trace"), ["--no-require-attach"]),
        # One still running after the grace period (5 s): said, and exit 3.
        ("run_background_still_running", 3, background % 8, ["--no-require-attach"]),
        # A --trace-dir holding traces of earlier runs: this run's go to a fresh directory inside
        # (the interposer gives up on a pid after 1,000 names taken), and the old are not analyzed.
        ("run_stale_trace_dir", 0,
         "test -z \"$(ls -A \"$CAPGUARD_TRACE_DIR\")\" || exit 7", ["--no-require-attach"]),
        # CAPGUARD_STARTUP_TIMES files (run's, capguard-run.<pid>.startup, and the interposer's,
        # capguard.<pid>.startup) planted as a symlink to someone else's file, or as a FIFO: not
        # written through, not waited on.
        ("run_startup_times_symlink_planted", 0,
         "ln -s %s \"$CAPGUARD_TRACE_DIR/capguard-run.$PPID.startup\" && "
         "ln -s %s \"$CAPGUARD_TRACE_DIR/capguard.$$.startup\"" % (victim, victim),
         ["--no-require-attach"], {"CAPGUARD_STARTUP_TIMES": "1"}),
        ("run_startup_times_fifo_planted", 0,
         "mkfifo \"$CAPGUARD_TRACE_DIR/capguard-run.$PPID.startup\" "
         "\"$CAPGUARD_TRACE_DIR/capguard.$$.startup\"",
         ["--no-require-attach"], {"CAPGUARD_STARTUP_TIMES": "1"}),
        ("run_symbols_symlink_planted", 3,
         "cp %s \"$CAPGUARD_TRACE_DIR/capguard.5.trace\" && "
         "ln -s %s \"$CAPGUARD_TRACE_DIR/capguard.5.trace.symbols\"" % (os.path.join(d, "t.trace"), victim)),
    ]
    marker = os.path.join(d, "ran")
    for name, expect, script, *extra in cases:
        shutil.rmtree(td, ignore_errors=True)
        if name == "run_stale_trace_dir":
            write(os.path.join(td, "capguard.1.trace"), trace())
        if os.path.exists(marker):
            os.remove(marker)
        script += " ; touch %s" % marker
        problems = []
        try:
            proc = subprocess.run([capguard, "run", "--trace-dir", td] + (extra[0] if extra else []) +
                                  ["--", "/bin/sh", "-c", script],
                                  cwd=d, capture_output=True, timeout=TIMEOUT, preexec_fn=limit,
                                  env=dict(os.environ, **(extra[1] if len(extra) > 1 else {})))
            if proc.returncode != expect:
                problems.append(f"exit {proc.returncode}, expected {expect}; stderr: "
                                f"{proc.stderr.decode(errors='replace')[-600:]}")
        except subprocess.TimeoutExpired:
            problems.append(f"did not finish within {TIMEOUT} s")
        if open(victim).read() != "precious\n":
            problems.append("the file a planted symlink names was written")
        if not problems and not os.path.exists(marker):
            print(f"skipped: {name} (the program never ran: is libcapguard.so next to capguard?)")
            continue
        print(("FAIL: " if problems else "ok: ") + name)
        for p in problems:
            print("    " + p)
        failed += bool(problems)
    return failed


def poisoned_cache_case(capguard, base):
    """The shared symbol cache poisoned by an untrusted trace. A non-PIE executable
    (ET_EXEC: libdwfl ignores a recorded base) named with a forged base, its return address in
    one function, such that address - base is the other function's return address: a cache
    keyed by the trace's base filed the first function's name under the second's key. A trusted
    report afterwards, with the same cache, must be the report made with an empty one."""
    d = os.path.join(base, "poisoned_cache")
    os.makedirs(d)
    src, exe = os.path.join(d, "app.c"), os.path.join(d, "app")
    write(src, "__attribute__((noinline)) int alpha_fn(int x) { return x * 3 + 1; }\n"
               "__attribute__((noinline)) int beta_fn(int x) { return x * 5 + 2; }\n"
               "int main(int c, char** v) { return alpha_fn(c) + beta_fn(c); }\n")
    if not shutil.which("cc") or subprocess.run(
            ["cc", "-O1", "-no-pie", "-fno-pie", "-Wl,--build-id", "-o", exe, src]).returncode != 0:
        print("skipped: poisoned_cache (needs cc)")
        return 0
    symbols = dict((line.split()[2], int(line.split()[0], 16)) for line in subprocess.run(
        ["nm", exe], capture_output=True, text=True).stdout.splitlines() if len(line.split()) == 3)
    note = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
    alpha, beta = symbols["alpha_fn"] + 2, symbols["beta_fn"] + 2  # inside each function
    module = "m %x 400000 500000 %s %s"
    trusted = trace(frames=[], native=[alpha]).replace(
        "i ok cupti\n", "i ok cupti\n" + module % (0, esc(exe), build_id) + "\n")
    forged = trace(frames=[], native=[beta]).replace(
        "i ok cupti\n", "i ok cupti\n" + module % (beta - alpha, esc(exe), build_id) + "\n")
    write(os.path.join(d, "trusted", "capguard.1.trace"), trusted)
    write(os.path.join(d, "forged", "capguard.1.trace"), forged)

    def report(name, cache, traces):
        out = os.path.join(d, name + ".json")
        proc = subprocess.run([capguard, "report", "-q", "-o", "json:" + out, os.path.join(d, traces)],
                              cwd=d, capture_output=True, timeout=TIMEOUT, preexec_fn=limit,
                              env=dict(os.environ, CAPGUARD_SYMBOL_CACHE=os.path.join(d, cache)))
        return proc.returncode, open(out, encoding="utf-8").read() if os.path.exists(out) else ""

    problems = []
    fresh = report("fresh", "cache-fresh", "trusted")
    report("forged", "cache", "forged")
    after = report("after", "cache", "trusted")
    again = report("again", "cache", "trusted")  # from the cache alone now
    if "alpha_fn" not in fresh[1]:
        problems.append("the trusted report does not name alpha_fn: the case proves nothing")
    for name, result in (("after the forged report", after), ("from the cache", again)):
        if result != fresh:
            problems.append("the trusted report " + name + " differs from one with an empty cache "
                            "(exit %d, %d; beta_fn named: %s)" % (result[0], fresh[0], "beta_fn" in result[1]))
    print(("FAIL: " if problems else "ok: ") + "poisoned_cache")
    for p in problems:
        print("    " + p)
    return bool(problems)


def main():
    capguard = os.path.abspath(sys.argv[1])
    only = set(sys.argv[2:])
    forbidden = forbidden_lines()
    base = tempfile.mkdtemp(prefix="capguard-hostile-")
    failed = 0
    try:
        for case in cases():
            if only and case.name not in only:
                continue
            problems = run_case(capguard, case, base, forbidden)
            if problems is None:
                print("skipped: " + case.name + " (needs cc and objcopy)")
                continue
            print(("FAIL: " if problems else "ok: ") + case.name)
            for p in problems:
                print("    " + p)
            failed += bool(problems)
        if not only or "poisoned_cache" in only:
            failed += poisoned_cache_case(capguard, base)
        if not only or any(name.startswith("run_") for name in only):
            failed += run_cases(capguard, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{failed} hostile case(s) failed" if failed else "all hostile cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
