"""One rank of a multi-process distributed check, run as a script:

    python3 _ranks.py '{"task": "collectives", "backend": "gloo", "rank": 0, "world_size": 2, ...}'

Ranks meet over TCP on 127.0.0.1 (a container has ``lo`` even without a
network). Each rank prints one line ``RANK_RESULT {json}`` with what it
measured; the parent (_dist.run_ranks) checks every rank's answer. Standard
library only at import; torch is imported inside.
"""

from __future__ import annotations

import json
import sys
import time


def _tensor(torch, rank, n, device):
    # Integer-valued floats: sums over ranks are exact in float32.
    return (torch.arange(n, dtype=torch.float32) % 97 + 1) * (rank + 1)


def collectives(cfg, torch, dist):
    rank, world, n = cfg["rank"], cfg["world_size"], cfg.get("n", 4096)
    dev = "cuda:%d" % rank if cfg.get("device") == "cuda" else "cpu"
    if dev != "cpu":
        torch.cuda.set_device(rank)
    t = _tensor(torch, rank, n, dev).to(dev)
    dist.all_reduce(t)
    want = _tensor(torch, 0, n, "cpu") * (world * (world + 1) // 2)
    ok_reduce = bool(torch.equal(t.cpu(), want))
    b = _tensor(torch, rank, n, dev).to(dev)
    dist.broadcast(b, 0)
    ok_bcast = bool(torch.equal(b.cpu(), _tensor(torch, 0, n, "cpu")))
    mine = _tensor(torch, rank, n, dev).to(dev)
    out = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(out, mine)
    ok_gather = all(
        bool(torch.equal(o.cpu(), _tensor(torch, r, n, "cpu"))) for r, o in enumerate(out)
    )
    dist.barrier()
    samples = []
    for i in range(cfg.get("warmup", 0) + cfg.get("reps", 0)):  # every rank runs the same count
        buf = _tensor(torch, rank, n, dev).to(dev)
        if dev != "cpu":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        if dev != "cpu":
            torch.cuda.synchronize()
        if i >= cfg.get("warmup", 0):
            samples.append(time.perf_counter() - t0)
    return {
        "all_reduce": ok_reduce,
        "broadcast": ok_bcast,
        "all_gather": ok_gather,
        "world_size": dist.get_world_size(),
        "backend": str(dist.get_backend()),
        "samples": samples,
    }


def rpc(cfg, torch, _dist):
    import torch.distributed.rpc as rpc_mod

    rank, world = cfg["rank"], cfg["world_size"]
    opts = rpc_mod.TensorPipeRpcBackendOptions(
        init_method="tcp://127.0.0.1:%d" % cfg["port"], num_worker_threads=4, rpc_timeout=60
    )
    rpc_mod.init_rpc("worker%d" % rank, rank=rank, world_size=world, rpc_backend_options=opts)
    try:
        peer = "worker%d" % ((rank + 1) % world)
        x, y = _tensor(torch, rank, 256, "cpu"), _tensor(torch, rank + 1, 256, "cpu")
        got = rpc_mod.rpc_sync(peer, torch.add, args=(x, y))
        got2 = rpc_mod.rpc_async(peer, torch.mul, args=(x, y)).wait()
        info = rpc_mod.get_worker_info(peer)
        result = {
            "rpc_sync": bool(torch.equal(got, x + y)),
            "rpc_async": bool(torch.equal(got2, x * y)),
            "peer": info.name,
            "peer_id": int(info.id),
            "world_size": world,
        }
    finally:
        rpc_mod.shutdown()  # waits for every rank: both sides' calls are answered
    return result


def main(argv):
    cfg = json.loads(argv[1])
    import torch
    import torch.distributed as dist

    if cfg["task"] == "rpc":
        out = rpc(cfg, torch, dist)
    else:
        dist.init_process_group(
            cfg["backend"],
            init_method="tcp://127.0.0.1:%d" % cfg["port"],
            rank=cfg["rank"],
            world_size=cfg["world_size"],
        )
        try:
            out = collectives(cfg, torch, dist)
            # answer before the teardown: torch 2.6's gloo can leave one rank in
            # destroy_process_group for good once its peer has gone (seen in the CUDA test
            # image); the parent stops a rank that lingers after every rank has answered
            _answer(out)
        finally:
            dist.destroy_process_group()
        return 0
    _answer(out)
    return 0


def _answer(out):
    sys.stdout.write("RANK_RESULT " + json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
