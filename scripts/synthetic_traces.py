#!/usr/bin/env python3
"""Synthetic recorded traces of testcase programs written without a GPU, the way
scripts/add_rule.py writes a new rule's: each program's calls by hand in the trace grammar (the
current format, trace/format.h), as the interposer would record them, with the frames in a
.symbols cache beside each trace so that no binary is needed, and a command line record that says
the trace is synthetic. A GPU recording replaces each (scripts/gpu_testcases.sh, then
scripts/import_recorded.py and testcases/check_golden.py --update PROGRAM).

    scripts/synthetic_traces.py [PROGRAM...]     # rewrites the named programs' traces (default: all)

Each culprit or user line is found in the program's source by a needle, so that an edit of the
source that moves a line moves its frames too.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_rule  # noqa: E402  (the trace grammar's escaping and the current format)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
NOTE = ("synthetic trace written by scripts/synthetic_traces.py, not recorded on a GPU: "
        "replace it with a recording (scripts/gpu_testcases.sh)")
PROGRAM_BASE = 0x100000
S1, S2, GRAPH, EXEC = 0x5000, 0x5100, 0x6000, 0x7000
TORCH_GRAPHS = "/synthetic/site-packages/torch/cuda/graphs.py"


class Program:
    """One process's trace: modules, then events; each event's stack is native frames (module,
    function, line, file) innermost first, then Python frames (file, line, function)."""

    def __init__(self, name, source):
        self.name, self.source = name, source
        with open(os.path.join(ROOT, source), encoding="utf-8") as f:
            self.lines = f.read().splitlines()
        self.modules = {"program": f"/synthetic/testcases/{name}"}
        self.records, self.symbols, self.seq, self.next_addr = [], [], 0, {}
        self.python_ids = 0

    def line(self, needle, nth=1):
        hits = [i + 1 for i, text in enumerate(self.lines) if needle in text]
        if len(hits) < nth:
            raise SystemExit(f"{self.source}: no line {nth} holding {needle!r}")
        return hits[nth - 1]

    def module(self, key, path):
        self.modules[key] = path

    def _address(self, key, frame):
        """One address per frame (a line calls from one place): stacks of one line are equal,
        as capture sites must be."""
        if frame in self.next_addr:
            return self.next_addr[frame], False
        index = list(self.modules).index(key)
        base = PROGRAM_BASE + 0x100000 * index
        n = sum(1 for f in self.next_addr if f[0] == key) + 1
        self.next_addr[frame] = base + 0x10 * n
        return self.next_addr[frame], True

    def call(self, api, fields, native, python=(), result=0):
        """native: (module key, function, line, file); the user's line as ("program", "main",
        line, source)."""
        self.seq += 1
        addresses = []
        for frame in native:
            key, function, line, file = frame
            address, fresh = self._address(key, frame)
            addresses.append(f"{address:x}")
            if fresh:
                self.symbols.append(
                    f"1\t{address:x}\t{line}\t{self.modules[key]}\t{function}\t{file}")
        ids = []
        for file, line, function in python:
            self.python_ids += 1
            ids.append(f"{self.python_ids:x}")
            self.records.append(f"y {self.python_ids:x} {line:x} {add_rule.escaped(file)} "
                                f"{add_rule.escaped(function)}")
        stack = " ".join(addresses + (["y"] + ids if ids else []))
        self.records.append(f"s {self.seq:x} {stack}")
        self.records.append(f"e {self.seq:x} {self.seq:x} 1 {api} {result & 0xffffffff:x} "
                            f"{self.seq:x} {fields}".rstrip())

    def raw(self, record):
        self.records.append(record)

    def user(self, needle, nth=1):
        return ("program", "main", self.line(needle, nth), self.source)

    def runtime(self, api):
        return ("program", api, 0, "")  # the static cudart's entry point, in the program

    def text(self):
        head = [f"v {add_rule.TOOL_VERSION} {add_rule.FORMAT_VERSION}", "p 1 0 0",
                "c " + add_rule.escaped(NOTE)]
        for index, path in enumerate(self.modules.values()):
            base = PROGRAM_BASE + 0x100000 * index
            head.append(f"m {base:x} {base:x} {base + 0x100000:x} {add_rule.escaped(path)}")
        head.append("i ok cupti")  # capguard attached, as every recording says
        trace = head + self.records + [f"z {self.seq + 1:x} 0"]
        return "\n".join(trace) + "\n", "\n".join(["capguard-symbols\t1"] + self.symbols) + "\n"


def at(p, api, fields, needle, nth=1, result=0):
    p.call(api, fields, [p.runtime(api), p.user(needle, nth)], result=result)


def stream_destroyed(p, twin):
    at(p, "cudaStreamCreateWithFlags", f"st={S1:x} fl=1 dm=0", "non_blocking_stream()", 1)
    at(p, "cudaStreamCreateWithFlags", f"st={S2:x} fl=1 dm=0", "non_blocking_stream()", 2)
    at(p, "cudaStreamBeginCapture", f"st={S1:x} sf=1 sb=0 sa=1 ci=1 md=2 dm=0",
       "cudaStreamBeginCapture")
    if twin:
        at(p, "cudaStreamEndCapture", f"st={S1:x} sf=1 sb=1 sa=0 ci=1 gr={GRAPH:x} nd=1 dm=0",
           "cudaStreamEndCapture")
        at(p, "cudaGraphDestroy", f"gr={GRAPH:x} dm=0", "discard(graph)")
    # The origin's destroy; then nothing is recorded (the interposer saw the capture end).
    at(p, "cudaStreamDestroy", f"st={S1:x} dm=0", "cudaStreamDestroy(stream)")
    at(p, "cudaStreamDestroy", f"st={S2:x} dm=0", "cudaStreamDestroy(later)")


def cufft_plan(p, twin):
    p.module("cudart", "/synthetic/cuda/lib64/libcudart.so.13")
    p.module("cufft", "/synthetic/cuda/lib64/libcufft.so.12")
    p.module("cuda", "/synthetic/lib/x86_64-linux-gnu/libcuda.so.1")
    rt = lambda api: ("cudart", api, 0, "")  # noqa: E731  (shared cudart)
    p.call("cudaStreamCreateWithFlags", f"st={S1:x} fl=1 dm=0",
           [rt("cudaStreamCreateWithFlags"), ("program", "main", p.line("non_blocking_stream()"),
                                              p.source)])
    begin = [rt("cudaStreamBeginCapture"), p.user("cudaStreamBeginCapture")]
    p.call("cudaStreamBeginCapture", f"st={S1:x} sf=1 sb=0 sa=1 ci=1 md=2 dm=0", begin)
    if not twin:
        # cufftPlan1d copying its tables with the driver's synchronous copy (legacy stream).
        plan = p.user("cufftPlan1d")
        p.call("cuMemcpyHtoD_v2", "dm=1",
               [("cuda", "cuMemcpyHtoD_v2", 0, ""), ("cufft", "cufft_internal_plan_copy", 0, ""),
                ("cufft", "cufftPlan1d", 0, ""), plan])
    p.call("cudaStreamEndCapture", f"st={S1:x} sf=1 sb=1 sa=0 ci=1 gr={GRAPH:x} nd=1 dm=0",
           [rt("cudaStreamEndCapture"), ("program", "end_and_replay", 0, ""),
            ("program", "main", p.line("end_and_replay(stream)"), p.source)])


def sweep(p, twin):
    """graph_size_sweep: run_size's capture site and run_empty's, by their own lines (the n-th
    occurrence of each call in the source: run_size's first, run_empty's second); the twin
    has the first only."""
    at(p, "cudaStreamCreateWithFlags", f"st={S1:x} fl=1 dm=0", "non_blocking_stream()")
    serial = [0]

    def capture(rows, nth):
        serial[0] += 1
        gx, gr = EXEC + serial[0], GRAPH + serial[0]
        at(p, "cudaStreamBeginCapture", f"st={S1:x} sf=1 sb=0 sa=1 ci={serial[0]:x} md=0 dm=0",
           "cudaStreamBeginCapture", nth)
        at(p, "cudaStreamEndCapture",
           f"st={S1:x} sf=1 sb=1 sa=0 ci={serial[0]:x} gr={gr:x} nd={1 if rows else 0} dm=0",
           "cudaStreamEndCapture", nth)
        at(p, "cudaGraphInstantiate", f"gr={gr:x} gx={gx:x} dm=0", "cudaGraphInstantiate", nth)
        if rows:  # one kernel node, one block per row (graph_sizes.h)
            p.raw(f"g {gx:x} 0 0 0 _Z10scale_rowsPfi a0:7f0000000000 x{rows:x},1,1,20,1,1,0 v5ca1a")
            p.raw(f"G {gx:x} {gr:x} 1 0 abc 1")
        else:
            p.raw(f"G {gx:x} {gr:x} 0 0 0 1")
        at(p, "cudaGraphDestroy", f"gr={gr:x} dm=0", "cudaGraphDestroy", nth)
        return gx

    def launch(gx, n, nth):
        for _ in range(n):
            at(p, "cudaGraphLaunch", f"st={S1:x} gx={gx:x} dm=0", "cudaGraphLaunch", nth)

    def destroy(gx, nth):
        at(p, "cudaGraphExecDestroy", f"gx={gx:x} dm=0", "cudaGraphExecDestroy", nth)

    if twin:
        execs = [capture(rows, 1) for rows in (512, 256, 128, 64, 32, 16, 8, 7, 5, 4, 3, 2, 1)]
        for gx in execs:
            launch(gx, 3, 1)
        for gx in execs:
            destroy(gx, 1)
        return
    for rows in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 3, 5, 7):
        gx = capture(rows, 1)
        launch(gx, 3, 1)
        destroy(gx, 1)
        empty = capture(0, 2)
        launch(empty, 1, 2)
        destroy(empty, 2)


def torch_copy(p, twin):
    """torch.cuda.graph around `y = x * 2` and the copy of a CPU tensor: pageable, PyTorch raises
    and __exit__ ends the capture while it propagates; pinned, the copy is a node."""
    p.module("torch", "/synthetic/site-packages/torch/lib/libtorch_cuda.so")
    p.module("cudart", "/synthetic/site-packages/nvidia/cu13/lib/libcudart.so.13")
    src = "/synthetic/" + p.source
    user = "capture" if not twin else "<module>"
    with_line = p.line("with torch.cuda.graph(g)")
    copy_line = p.line('host.to("cuda"')
    outer = [(src, p.line('report("capture", capture)'), "<module>"),
             ("/synthetic/testcases/python/common.py", 8, "report")] if not twin else []

    def native(api):
        return [("cudart", api, 0, ""), ("torch", "at::cuda::CUDAGraph::capture_begin", 0, "")]

    p.call("cudaStreamCreateWithPriority", f"st={S1:x} fl=1 dm=0",
           [("cudart", "cudaStreamCreateWithPriority", 0, "")],
           [(TORCH_GRAPHS, 0xe1, "graph.__init__"), (src, with_line, user)] + outer[1:] + outer[:1])
    p.call("cudaStreamBeginCapture", f"st={S1:x} sf=1 sb=0 sa=1 ci=1 md=0 dm=0",
           native("cudaStreamBeginCapture"),
           [(TORCH_GRAPHS, 0x73, "CUDAGraph.capture_begin"), (TORCH_GRAPHS, 0x101, "graph.__enter__"),
            (src, with_line, user)] + outer[1:] + outer[:1])
    if twin:  # the pinned copy, captured as a memcpy node on the capture stream
        p.call("cudaMemcpyAsync", f"st={S1:x} sf=1 sb=1 sa=1 ci=1 ck=1 dm=0",
               [("cudart", "cudaMemcpyAsync", 0, ""), ("torch", "at::native::copy_kernel_cuda", 0, "")],
               [(src, copy_line, user)])
    python_end = [(TORCH_GRAPHS, 0x7e, "CUDAGraph.capture_end"), (TORCH_GRAPHS, 0x109, "graph.__exit__"),
                  (src, with_line, user)] + outer[1:] + outer[:1]
    if not twin:
        python_end.insert(0, ("<exception>", copy_line,
                              "RuntimeError: Cannot copy between CPU and CUDA tensors during CUDA "
                              "graph capture unless the CPU tensor is pinned."))
    p.call("cudaStreamEndCapture", f"st={S1:x} sb=1 sa=0 ci=1 gr={GRAPH:x} nd={2 if twin else 1} dm=0",
           [("cudart", "cudaStreamEndCapture", 0, ""), ("torch", "at::cuda::CUDAGraph::capture_end", 0, "")],
           python_end)
    p.call("cudaGraphInstantiateWithFlags", f"gr={GRAPH:x} gx={EXEC:x} dm=0",
           [("cudart", "cudaGraphInstantiateWithFlags", 0, ""),
            ("torch", "at::cuda::CUDAGraph::capture_end", 0, "")],
           python_end[1:] if not twin else python_end)
    p.raw(f"g {EXEC:x} 0 0 0 _ZN2at6native29vectorized_elementwise_kernel a2:7f0000000000 "
          "x1,1,1,80,1,1,0 v1")
    if twin:
        p.raw(f"g {EXEC:x} 1 0 1  s0:7f1000000000 d0:7f0000001000 x1000,1,1")
    p.raw(f"G {EXEC:x} {GRAPH:x} {2 if twin else 1} {1 if twin else 0} abc 1")
    if twin:
        p.call("cudaGraphLaunch", f"st={S1:x} gx={EXEC:x} dm=0",
               [("cudart", "cudaGraphLaunch", 0, ""), ("torch", "at::cuda::CUDAGraph::replay", 0, "")],
               [(TORCH_GRAPHS, 0x8a, "CUDAGraph.replay"), (src, p.line("g.replay()"), "<module>")])


# program -> (source, writer, twin, shared cudart twin too)
PROGRAMS = {
    "capture_ended_stream_destroyed": ("testcases/capture_ended_stream_destroyed.cu", stream_destroyed, False, True),
    "capture_ended_stream_destroyed_ok": ("testcases/capture_ended_stream_destroyed_ok.cu", stream_destroyed, True, True),
    "cufft_plan_in_capture": ("testcases/libs/cufft_plan_in_capture.cu", cufft_plan, False, False),
    "cufft_plan_in_capture_ok": ("testcases/libs/cufft_plan_in_capture_ok.cu", cufft_plan, True, False),
    "graph_size_sweep": ("testcases/graph_size_sweep.cu", sweep, False, True),
    "graph_size_sweep_ok": ("testcases/graph_size_sweep_ok.cu", sweep, True, True),
    "torch_pageable_copy_in_capture": ("testcases/python/torch_pageable_copy_in_capture.py", torch_copy, False, False),
    "torch_pinned_copy_in_capture_ok": ("testcases/python/torch_pinned_copy_in_capture_ok.py", torch_copy, True, False),
}


def write(name):
    source, writer, twin, shared = PROGRAMS[name]
    for program in [name] + ([name + "_shared"] if shared else []):
        p = Program(program, source)
        writer(p, twin)
        trace, symbols = p.text()
        folder = os.path.join(ROOT, "testcases", "recorded", "traces", program)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "capguard.1.trace"), "w", encoding="utf-8") as f:
            f.write(trace)
        with open(os.path.join(folder, "capguard.1.trace.symbols"), "w", encoding="utf-8") as f:
            f.write(symbols)
        print(f"wrote testcases/recorded/traces/{program}/")


def main(argv):
    names = argv or list(PROGRAMS)
    for name in names:
        if name not in PROGRAMS:
            raise SystemExit(f"{name}: not a program of this script ({', '.join(PROGRAMS)})")
        write(name)


if __name__ == "__main__":
    main(sys.argv[1:])
