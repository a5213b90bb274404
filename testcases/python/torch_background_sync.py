"""A background thread synchronizes the device while the main thread captures in Global mode
(the telemetry-thread pattern): CUDA rejects the other thread's call and the capture dies."""
import threading

import torch
from common import report

x = torch.ones(1 << 20, device="cuda")
g = torch.cuda.CUDAGraph()
capturing = threading.Event()
done = threading.Event()


def telemetry():
    capturing.wait()
    try:
        torch.cuda.synchronize()  # expect: sync-during-capture
    except Exception as exc:
        print("telemetry thread:", type(exc).__name__)
    done.set()


def capture():
    with torch.cuda.graph(g):
        y = x * 2
        capturing.set()
        done.wait()
        y += 1


threading.Thread(target=telemetry).start()
report("capture", capture)
