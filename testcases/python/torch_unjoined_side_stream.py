"""A side stream forked into the capture (it waits on the capture stream) and never joined
back: the capture ends with unjoined work (904)."""
import torch
from common import report

x = torch.ones(16, device="cuda")
g = torch.cuda.CUDAGraph()
side = torch.cuda.Stream()


def capture():
    with torch.cuda.graph(g):  # expect: unjoined-fork
        y = x * 2
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            z = y + 1  # never joined back into the capture stream
        del z


report("capture", capture)
