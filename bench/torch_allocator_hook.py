#!/usr/bin/env python3
"""What the framework allocator hooks cost: PyTorch's caching-allocator tracker
(interposer/torch_allocator.h) and CuPy's pool hook (python/capguard_python_startup). Steady
loops that allocate and free tensors or arrays every step while their graphs live, timed inside
the program (steps after warm-up), natively, under `capguard run` and under `capguard run` with
the hooks off (CAPGUARD_FRAMEWORK_HOOKS=0), alternating, each side first in turn. Run on the GPU
machine:

    bench/torch_allocator_hook.py --capguard build/capguard [--rounds 7] [--kinds cupy]

  training   a whole training step captured (forward, backward, optimizer step) and replayed;
             each step a new batch is made, copied into the static input, and the loss copied
             out (the allocations a data loader and logging make)
  serving    graphs for 8 batch sizes in one pool (vLLM's pattern); each request makes its
             input, copies it in, replays the graph of its size and clones the output
  cupy       the serving loop in CuPy: a graph per batch size; each request makes its array,
             copies it into the captured input, launches the graph and copies the output (each
             step's two arrays go back to the pool while the graphs hold memory: every free
             reaches the hook)

Prints, per loop, the step time's median and range on each side, and the ratios to native:
the median of the per-round ratios and the ratio of the medians.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

WORKLOAD = r'''
import sys, time, torch
kind, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
if kind == "training":
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512, device="cuda"); y = torch.randn(256, 512, device="cuda")
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.mse_loss(model(x), y).backward(); opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph(); opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = torch.nn.functional.mse_loss(model(x), y); loss.backward(); opt.step()
    def step(i):
        batch = torch.randn(256, 512, device="cuda"); target = torch.randn(256, 512, device="cuda")
        x.copy_(batch); y.copy_(target); g.replay()
        return loss.detach().clone()
else:
    sizes = [1, 2, 4, 8, 16, 32, 64, 128]
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 256)).cuda().eval()
    static_in = torch.zeros(sizes[-1], 256, device="cuda")
    pool = torch.cuda.graph_pool_handle(); graphs, outs = {}, {}
    with torch.inference_mode():
        for n in sizes: model(static_in[:n])
        torch.cuda.synchronize()
        for n in reversed(sizes):
            graphs[n] = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graphs[n], pool=pool):
                outs[n] = model(static_in[:n])
    def step(i):
        n = sizes[i % len(sizes)]
        with torch.inference_mode():
            request = torch.randn(n, 256, device="cuda")
            static_in[:n].copy_(request); graphs[n].replay()
            return outs[n].clone()
for i in range(200): step(i)
torch.cuda.synchronize()
start = time.perf_counter()
for i in range(steps): step(i)
torch.cuda.synchronize()
print("metric step_us", (time.perf_counter() - start) / steps * 1e6)
'''


CUPY_WORKLOAD = r'''
import sys, time, cupy as cp
kind, steps = sys.argv[1], int(sys.argv[2])
sizes = [1 << k for k in range(10, 18, 1)]
s = cp.cuda.Stream(non_blocking=True)
x = cp.zeros(sizes[-1], dtype=cp.float32); y = cp.zeros(sizes[-1], dtype=cp.float32)
t = cp.zeros(sizes[-1], dtype=cp.float32)
graphs = {}
# The add reads t, not y: an elementwise op whose output overlaps its input makes a temporary
# copy, which a capture frees into the pool while its graph still uses it (capguard reported
# each step's arrays reusing it: replay-after-free, 8 graphs).
with s:
    for n in sizes:
        cp.multiply(x[:n], 2.0, out=t[:n]); cp.add(t[:n], 1.0, out=y[:n])
    s.synchronize()
    for n in sizes:
        s.begin_capture()
        cp.multiply(x[:n], 2.0, out=t[:n]); cp.add(t[:n], 1.0, out=y[:n])
        graphs[n] = s.end_capture()
    def step(i):
        n = sizes[i % len(sizes)]
        request = cp.full(n, float(i), dtype=cp.float32)
        x[:n] = request; graphs[n].launch(s)
        return y[:n].copy()
    for i in range(200): step(i)
    s.synchronize()
    start = time.perf_counter()
    for i in range(steps): step(i)
    s.synchronize()
print("metric step_us", (time.perf_counter() - start) / steps * 1e6)
'''
WORKLOADS = {"training": WORKLOAD, "serving": WORKLOAD, "cupy": CUPY_WORKLOAD}


def run(command, env=None):
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith("metric step_us"):
            return float(line.split()[2])
    raise RuntimeError(f"{command}: no metric (exit {out.returncode}): {out.stderr[-3000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--capguard", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--kinds", default="training,serving,cupy",
                        help="comma-separated: " + ", ".join(WORKLOADS))
    args = parser.parse_args()
    off = dict(os.environ, CAPGUARD_FRAMEWORK_HOOKS="0")
    for kind in args.kinds.split(","):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(WORKLOADS[kind])
        sides = {
            "native": lambda: run([sys.executable, f.name, kind, str(args.steps)]),
            "capguard": lambda: run([args.capguard, "run", "--", sys.executable, f.name, kind,
                                     str(args.steps)]),
            "hooks off": lambda: run([args.capguard, "run", "--", sys.executable, f.name, kind,
                                        str(args.steps)], env=off),
        }
        times = {name: [] for name in sides}
        order = list(sides)
        for r in range(args.rounds):
            for name in order[r % 3:] + order[:r % 3]:  # each side first in turn
                times[name].append(sides[name]())
        native = times["native"]
        print(f"== {kind}: step time in us, median (min-max) of {args.rounds} rounds")
        for name, values in times.items():
            line = f"  {name:12s} {statistics.median(values):8.2f} ({min(values):.2f}-{max(values):.2f})"
            if name != "native":
                ratios = [v / n for v, n in zip(values, native)]
                line += (f"  ratio: median of rounds {statistics.median(ratios):.3f}"
                         f" ({min(ratios):.3f}-{max(ratios):.3f}),"
                         f" of medians {statistics.median(values) / statistics.median(native):.3f}")
            print(line)
        os.unlink(f.name)


if __name__ == "__main__":
    main()
