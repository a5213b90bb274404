"""graph-rebuilt-every-step inside a unittest.TestCase, the pattern of PyTorch's own
test_repeat_graph_capture_cublas_workspace_memory (test/test_cuda.py): a (1024, 512) by (512, 64)
matmul is warmed up, then captured 100 times, each time into a new torch.cuda.CUDAGraph that is
replayed once and dropped when the next one replaces it; the test checks that device memory does
not grow. The same churn as a script must be found here too, where the capture runs inside
unittest's frames. Run as a script, unittest.main() exits 0 when the test passes."""
import unittest

import torch


class RepeatGraphCaptureTest(unittest.TestCase):
    def test_repeat_graph_capture_cublas_workspace_memory(self):
        torch.backends.cuda.preferred_blas_library("cublas")
        a = torch.rand((1024, 512), device="cuda")
        b = torch.rand((512, 64), device="cuda")
        torch.mm(a, b)  # warm-up: cuBLAS's handle and workspace exist before the first capture

        free_before, total = torch.cuda.mem_get_info()
        for _ in range(100):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):  # expect: graph-rebuilt-every-step
                torch.mm(a, b)
            g.replay()
        torch.cuda.synchronize()
        free_after, _ = torch.cuda.mem_get_info()
        # PyTorch's test asserts < 0.1 GB here; on the H100 with torch 2.11 it grows by about
        # 0.2 GB natively too, so this copy only prints it: the churn is what it is here for.
        print(f"device memory grew by {((total - free_after) - (total - free_before)) / 1e9:.3f} GB")


if __name__ == "__main__":
    unittest.main()
