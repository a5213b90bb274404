"""One graph per optimizer configuration from one capture site (no finding expected): the
pattern of PyTorch's test_graph_optims (test/test_cuda.py), which warms up, captures one
opt.step() and replays it for each optimizer configuration in turn. Twelve configurations (six
optimizers, each with foreach off and on) make twelve graphs of twelve topologies at one
`with torch.cuda.graph(g):` line, each captured after the earlier ones were replayed. No input
size changes: these are other computations, not specializations of one, which padding cannot
merge, so capguard reports no graph-specialization-growth; the lifecycle table still
lists the site with its 12 graphs and 12 topologies. Every graph stays alive to the end.

Pending (testcases/python/pending/ is not run): a python/ program must have a recorded trace, and
this one has none yet. Record it on the GPU machine after `git mv` into testcases/python/."""
import torch

SHAPES = [(256, 64), (64,), (64, 32), (32,)]
CONFIGS = [
    (cls, dict(kwargs, foreach=foreach))
    for cls, kwargs in (
        (torch.optim.Adam, dict(lr=0.01, capturable=True)),
        (torch.optim.AdamW, dict(lr=0.01, capturable=True)),
        (torch.optim.NAdam, dict(lr=0.01, capturable=True)),
        (torch.optim.RAdam, dict(lr=0.01, capturable=True)),
        (torch.optim.RMSprop, dict(lr=0.01, capturable=True)),
        (torch.optim.SGD, dict(lr=0.01, momentum=0.9)),
    )
    for foreach in (False, True)
]

torch.manual_seed(0)
graphs = []  # every graph kept: no re-capture churn


def capture_step(cls, kwargs):
    params = [torch.randn(shape, device="cuda", requires_grad=True) for shape in SHAPES]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = cls(params, **kwargs)
    side = torch.cuda.Stream()  # warm-up on a side stream, as test_graph_optims does
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        opt.step()
    for _ in range(5):  # replayed before the next configuration's capture
        g.replay()
    graphs.append((g, opt, params))


for cls, kwargs in CONFIGS:
    capture_step(cls, kwargs)
torch.cuda.synchronize()
print(f"{len(graphs)} optimizer graphs captured and replayed")
