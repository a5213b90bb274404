"""Two pytest tests for the pytest plugin on the GPU (scripts/gpu_pytest_check.sh runs them under
`capguard run -o junit:... -- python3 -m pytest -p capguard_cuda.pytest_plugin`): the JUnit report
must fail test_item_in_capture, with sync-during-capture (the finding of
../torch_item_in_capture.py), and keep test_clean_capture clean.

A folder of its own: check_expectations.py runs python/*.py only, not these (they are pytest
tests, not programs). The clean test comes first: a capture invalidated by .item() can leave
PyTorch's side stream and memory pool in a state a later capture should not have to survive.
Nothing here catches the CUDA error: test_item_in_capture fails the way a user's test would."""
import torch


def test_clean_capture():
    x = torch.ones(16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: every kernel is loaded before the capture
        y = x * 2
        y += 1
    torch.cuda.current_stream().wait_stream(side)

    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        y += 1
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    assert y.sum().item() == 48.0  # read after replay, outside the capture: fine


def test_item_in_capture():
    x = torch.ones(16, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        if y.sum().item() > 0:  # the mistake: a device-to-host copy and a sync inside the capture
            y += 1
