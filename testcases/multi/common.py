"""Shared by the two-rank programs (run by torchrun, one process per GPU): the process group and
the warm-up of the NCCL communicator before any capture; `report` is python/common.py's guard."""
import importlib.util
import os

import torch
import torch.distributed as dist

_spec = importlib.util.spec_from_file_location(
    "python_testcase_common", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "common.py"))
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
report = _common.report


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

