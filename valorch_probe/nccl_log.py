"""The transport NCCL / RCCL chose, from its own log (``NCCL_DEBUG=INFO``): each connection
it sets up is logged as ``NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0``
(NET/Socket: TCP sockets; NET/IB: InfiniBand or RoCE verbs), ``... via P2P/IPC/read``
(GPU peer to peer: NVLink or PCIe; RCCL: xGMI), ``... via SHM/direct/direct`` (host shared
memory), and an NVLink SHARP collective as NVLS.

Tested on real logs of public issue threads (tests/unit/test_nccl_log.py cites each)."""

from __future__ import annotations

import collections
import os
import re
import tempfile
from typing import List

_VIA = re.compile(
    r"NCCL INFO Channel \d+(?:/\d+)?\s*:.*?\bvia (NET/[A-Za-z]+|P2P|SHM|NVLS|CollNet)"
)
# what each transport is, in words a reader of a busbw figure needs
LABELS = {
    "NET/Socket": "TCP sockets",
    "NET/IB": "InfiniBand/RoCE (NET/IB)",
    "P2P": "GPU peer-to-peer (P2P: NVLink/xGMI or PCIe)",
    "SHM": "host shared memory (SHM)",
    "NVLS": "NVLink SHARP (NVLS)",
    "CollNet": "CollNet (in-network reduction)",
}


def transports(text: str) -> List[str]:
    """The transports NCCL logged connections over, most used first."""
    counts = collections.Counter(m.group(1) for m in _VIA.finditer(text or ""))
    return sorted(counts, key=lambda k: (-counts[k], k))


def describe(names: List[str]) -> str:
    return ", ".join(LABELS.get(n, n) for n in names)


def enable() -> str:
    """Turn NCCL's INFO log on into a file of this process (before the process group is made),
    unless the user set NCCL_DEBUG themselves; returns the file's path ("" when not ours)."""
    if os.environ.get("NCCL_DEBUG"):
        return os.environ.get("NCCL_DEBUG_FILE", "")
    path = os.path.join(tempfile.mkdtemp(prefix="valorch-nccl-"), "nccl.log")
    os.environ.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET,P2P,SHM", NCCL_DEBUG_FILE=path)
    return path
