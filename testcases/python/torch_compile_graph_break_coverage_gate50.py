"""torch_compile_graph_break_coverage's step under --min-graph-coverage 50: the compiled layers'
kernels outnumber the eager normalization's, so the share after warm-up passes the gate."""
# capguard-args: --min-graph-coverage 50
import torch_compile_graph_break_coverage

torch_compile_graph_break_coverage.main()
