"""Graph coverage of torch.compile(mode="reduce-overhead") with a graph break: the normalization
in the middle of the step is left out of the compiled graphs (torch._dynamo.disable), so its
kernels run eagerly between the two cudagraph trees' replays every step. The coverage section
names its line; the gate at 95% fails the run (torch_compile_graph_break_coverage_gate50.py runs
the same step under --min-graph-coverage 50, which passes)."""
# capguard-args: --min-graph-coverage 95
# expect-exit: 1
import torch

torch.manual_seed(0)
weights = [torch.randn(256, 256, device="cuda") / 16 for _ in range(6)]


@torch._dynamo.disable
def normalize(y):
    return y / y.norm()  # expect-eager


@torch.compile(mode="reduce-overhead")
def step(x):
    for w in weights[:3]:
        x = torch.relu(x @ w)
    x = normalize(x)  # a graph break: this op stays eager
    for w in weights[3:]:
        x = torch.relu(x @ w)
    return x


def main():
    x = torch.randn(64, 256, device="cuda")
    total = 0.0
    for _ in range(30):
        total += float(step(x).sum())
    torch.cuda.synchronize()
    print(f"total {total:.3f}")


if __name__ == "__main__":
    main()
