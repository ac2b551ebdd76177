"""Times PyTorch process-group setup and teardown (NCCL backend) on one machine, one process per GPU.

Each rank times, with a wall clock after a host barrier: init_process_group, the first all_reduce of 4 bytes
(NCCL creates its communicator lazily on the first collective), a second all_reduce (the steady floor), and
destroy_process_group. Rank 0 writes the medians over ranks' maxima to --out as JSON (seconds).
"""
import argparse, json, os, time
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, port, q):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    torch.zeros(1, device="cuda")  # CUDA context outside the timed region
    t = {}
    t0 = time.perf_counter()
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    t["init_process_group_s"] = time.perf_counter() - t0
    x = torch.ones(1, device="cuda")
    t0 = time.perf_counter()
    dist.all_reduce(x)
    torch.cuda.synchronize()
    t["first_all_reduce_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    dist.all_reduce(x)
    torch.cuda.synchronize()
    t["second_all_reduce_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    dist.destroy_process_group()
    t["destroy_process_group_s"] = time.perf_counter() - t0
    q.put((rank, t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world-size", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = 29500 + (os.getpid() % 1000)
    t0 = time.perf_counter()
    procs = [ctx.Process(target=worker, args=(r, a.world_size, port, q)) for r in range(a.world_size)]
    for p in procs:
        p.start()
    res = dict(q.get(timeout=80) for _ in procs)
    for p in procs:
        p.join()
    out = {"world_size": a.world_size, "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
           "wall_s": time.perf_counter() - t0,
           "per_rank": res,
           "max_over_ranks": {k: max(r[k] for r in res.values()) for k in res[0]}}
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, a.out)
    print(json.dumps(out["max_over_ranks"]))


if __name__ == "__main__":
    main()
