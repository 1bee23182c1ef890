"""The kernels checks' operations again in a child interpreter with the libraries' own logs
on (vendor_log.py), for the cases kernel names cannot tell: cuBLAS and cuBLASLt share their
kernels' names; MIOpen's convolutions run its own kernels, Composable Kernel instances or
rocBLAS / hipBLASLt GEMMs. A library the logs show ran replaces the kernel-name labels it
covers (Context.decide), and the result's evidence names the log that decided."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from .. import vendor_log

# the evidence.KERNEL_LIBRARIES labels each library's log overrides
NVIDIA_GEMM = ["cuBLAS/cuBLASLt", "CUTLASS"]
MIOPEN_CONV = ["MIOpen", "Composable Kernel", "rocBLAS/hipBLASLt (Tensile)", "rocBLAS", "hipBLASLt"]

MATMUL_SCRIPT = (
    "import torch\na = torch.randn(%d, %d, device='cuda').to(torch.%s)\n"
    "b = torch.randn(%d, %d, device='cuda').to(torch.%s)\na @ b\ntorch.cuda.synchronize()\n"
)
CONV_SCRIPT = (
    "import torch\nx = torch.randn(%s, device='cuda')\nw = torch.randn(%s, device='cuda')\n"
    "torch.nn.functional.%s(x, w, padding=1)\ntorch.cuda.synchronize()\n"
)


def matmul_script(n: int, dtype: str) -> str:
    return MATMUL_SCRIPT % (n, n, dtype, n, n, dtype)


def conv_script(x_shape: Sequence[int], w_shape: Sequence[int], fn: str) -> str:
    xs, ws = (", ".join(str(int(d)) for d in shape) for shape in (x_shape, w_shape))
    return CONV_SCRIPT % (xs, ws, fn)


def decide(ctx: Any, script: str, covers: List[str]) -> Dict[str, Any]:
    """Run ``script`` with the logs on; what they show decides over the kernel names. The
    facts, as metrics (``log_`` prefixed, empty ones left out)."""
    facts = vendor_log.served_by(script)
    ctx.decide(facts["libraries"], covers, facts["decided_by"])
    return {"log_" + k: v for k, v in facts.items() if k != "libraries" and v not in ("", 0)}
