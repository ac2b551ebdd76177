"""Measures Megatron-style 1F1B pipeline steps with PyTorch P2P (torch.distributed over NCCL).

One process per GPU (launch with torchrun). Rank r runs stage r. Compute is emulated with a spin kernel calibrated
against CUDA events, so each stage's forward and backward take --fwd-us / --bwd-us. The P2P modes follow
Megatron-LM's p2p_communication.py: batched (one batch_isend_irecv per exchange), overlapped (isend/irecv with the
even/odd rank ordering, all on the pipeline group) and sequential (the same ordering, each operation waited before
the next). Results (step time per configuration and repetition, plus metadata) go to --out as JSON, written
atomically. This is the `--framework torch` reference for commsim's pipeline workload.
"""
import argparse
import time

import torch
import torch.distributed as dist

from ranks import cuda_rank, run_metadata, write_results


def calibrate_sleep(device):
    """Cycles of torch.cuda._sleep per microsecond on this GPU, measured with CUDA events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 20_000_000
    torch.cuda._sleep(1000)
    torch.cuda.synchronize(device)
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    torch.cuda.synchronize(device)
    return cycles / (start.elapsed_time(end) * 1000.0)


class P2P:
    """Megatron's _communicate for one stage: send/recv to the previous and next stage in the chosen mode."""

    def __init__(self, mode, rank, world, group):
        self.mode, self.rank, self.world, self.group = mode, rank, world, group
        self.prev = rank - 1 if rank > 0 else None
        self.next = rank + 1 if rank < world - 1 else None

    def communicate(self, send_next=None, send_prev=None, recv_prev=None, recv_next=None):
        ops = []  # (op, tensor, peer) in Megatron's order for this rank's parity
        if self.mode == "batched":
            if send_prev is not None:
                ops.append((dist.isend, send_prev, self.prev))
            if recv_prev is not None:
                ops.append((dist.irecv, recv_prev, self.prev))
            if send_next is not None:
                ops.append((dist.isend, send_next, self.next))
            if recv_next is not None:
                ops.append((dist.irecv, recv_next, self.next))
            if ops:
                reqs = dist.batch_isend_irecv([dist.P2POp(op, t, peer, self.group) for op, t, peer in ops])
                for r in reqs:
                    r.wait()
            return
        if self.rank % 2 == 0:
            order = [(dist.isend, send_next, self.next), (dist.irecv, recv_prev, self.prev),
                     (dist.isend, send_prev, self.prev), (dist.irecv, recv_next, self.next)]
        else:
            order = [(dist.irecv, recv_prev, self.prev), (dist.isend, send_next, self.next),
                     (dist.irecv, recv_next, self.next), (dist.isend, send_prev, self.prev)]
        reqs = []
        for op, t, peer in order:
            if t is None:
                continue
            req = op(t, peer, group=self.group)
            if self.mode == "sequential":
                req.wait()
            else:
                reqs.append(req)
        for r in reqs:
            r.wait()


def one_f_one_b(p2p, microbatches, act, fwd_cycles, bwd_cycles):
    """Megatron forward_backward_pipelining_without_interleaving, with emulated compute."""
    rank, world = p2p.rank, p2p.world
    first, last = rank == 0, rank == world - 1
    warmup = min(world - rank - 1, microbatches)
    remaining = microbatches - warmup
    buf_in = torch.empty_like(act)
    buf_grad = torch.empty_like(act)
    for _ in range(warmup):
        if not first:
            p2p.communicate(recv_prev=buf_in)
        torch.cuda._sleep(fwd_cycles)
        if not last:
            p2p.communicate(send_next=act)
    if remaining > 0 and not first:
        p2p.communicate(recv_prev=buf_in)
    for i in range(remaining):
        torch.cuda._sleep(fwd_cycles)
        if not last:
            p2p.communicate(send_next=act, recv_next=buf_grad)  # send_forward_recv_backward
        torch.cuda._sleep(bwd_cycles)
        if i == remaining - 1:
            if not first:
                p2p.communicate(send_prev=act)  # send_backward
        elif not first:
            p2p.communicate(send_prev=act, recv_prev=buf_in)  # send_backward_recv_forward
    for _ in range(warmup):
        if not last:
            p2p.communicate(recv_next=buf_grad)
        torch.cuda._sleep(bwd_cycles)
        if not first:
            p2p.communicate(send_prev=act)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--activation-bytes", type=int, nargs="+", default=[4 << 20, 64 << 20])
    ap.add_argument("--microbatches", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--modes", nargs="+", default=["sequential", "overlapped", "batched"])
    ap.add_argument("--fwd-us", type=float, default=500.0)
    ap.add_argument("--bwd-us", type=float, default=1000.0)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    rank, world, local, device = cuda_rank()
    dist.init_process_group("nccl", device_id=device)
    group = dist.group.WORLD
    cyc_per_us = calibrate_sleep(device)
    configs = [(s, m, mode) for s in a.activation_bytes for m in a.microbatches for mode in a.modes]
    rng = __import__("random").Random(a.seed)
    results = []
    for rep in range(a.reps):
        order = list(range(len(configs)))
        rng.shuffle(order)
        for ci in order:
            size, mb, mode = configs[ci]
            act = torch.full((size // 2,), 1.0, dtype=torch.bfloat16, device=device)
            p2p = P2P(mode, rank, world, group)
            fwd, bwd = int(a.fwd_us * cyc_per_us), int(a.bwd_us * cyc_per_us)
            for _ in range(a.warmup if rep == 0 else 1):
                one_f_one_b(p2p, mb, act, fwd, bwd)
            torch.cuda.synchronize(device)
            dist.barrier()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            start.record()
            one_f_one_b(p2p, mb, act, fwd, bwd)
            end.record()
            torch.cuda.synchronize(device)
            wall = (time.perf_counter() - t0) * 1e6
            gpu = start.elapsed_time(end) * 1000.0
            times = [None] * world
            dist.all_gather_object(times, (gpu, wall))
            results.append({"config_id": ci, "rep": rep, "activation_bytes": size, "microbatches": mb, "mode": mode,
                            "step_us": max(t[0] for t in times), "per_rank_gpu_us": [t[0] for t in times],
                            "per_rank_wall_us": [t[1] for t in times]})
    if rank == 0:
        meta = {"tool": "measure/torch/pipeline_1f1b.py", "framework": "torch", "stages": world,
                "fwd_us": a.fwd_us, "bwd_us": a.bwd_us, "sleep_cycles_per_us": cyc_per_us, **run_metadata(device)}
        write_results(a.out, meta, results)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
