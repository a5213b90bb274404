"""Shared by the two-rank programs (run by torchrun, one process per GPU): the process group,
the warm-up of the NCCL communicator before any capture, and a guard that reports, rather than
raises, the error a broken capture produces (the mistake is intentional)."""
import os

import torch
import torch.distributed as dist


def setup():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    x = torch.full((1 << 16,), float(rank + 1), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    return rank, x


def report(what, fn):
    try:
        fn()
        print(f"{what}: ok")
    except Exception as exc:  # the broken capture surfaces here, at the wrong line
        print(f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
