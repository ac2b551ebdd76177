"""Measures the torch.distributed broadcast baseline of RL weight sync: qwen2.5-32b's tensors, one broadcast per
tensor from rank 0 (the trainer) to every rank, one process per GPU (launch with torchrun).

Reports the metric names of the weight-sync seed document, in seconds: init_process_group_time and
destroy_group_time (once: the group lives for the whole run), and broadcast_time, sync_time and total_transfer_time
(broadcast + sync) per repetition and rank. The tensor list is
derived from the model's architecture (layers, hidden, intermediate, heads, kv heads, vocab, untied embeddings,
q/k/v biases), the same derivation commsim's model specs use. Results go to --out as JSON, written atomically.
"""
import argparse
import time

import torch
import torch.distributed as dist

from ranks import cuda_rank, run_metadata, write_results

QWEN25_32B = dict(layers=64, hidden=5120, intermediate=27648, heads=40, kv_heads=8, vocab=152064, tied=False,
                  qkv_bias=True)


def tensor_shapes(spec):
    h, i, v = spec["hidden"], spec["intermediate"], spec["vocab"]
    kv = h // spec["heads"] * spec["kv_heads"]
    shapes = [("model.embed_tokens.weight", (v, h))]
    for layer in range(spec["layers"]):
        p = f"model.layers.{layer}."
        shapes += [(p + "self_attn.q_proj.weight", (h, h)), (p + "self_attn.k_proj.weight", (kv, h)),
                   (p + "self_attn.v_proj.weight", (kv, h))]
        if spec["qkv_bias"]:
            shapes += [(p + "self_attn.q_proj.bias", (h,)), (p + "self_attn.k_proj.bias", (kv,)),
                       (p + "self_attn.v_proj.bias", (kv,))]
        shapes += [(p + "self_attn.o_proj.weight", (h, h)), (p + "mlp.gate_proj.weight", (i, h)),
                   (p + "mlp.up_proj.weight", (i, h)), (p + "mlp.down_proj.weight", (h, i)),
                   (p + "input_layernorm.weight", (h,)), (p + "post_attention_layernorm.weight", (h,))]
    shapes.append(("model.norm.weight", (h,)))
    if not spec["tied"]:
        shapes.append(("lm_head.weight", (v, h)))
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rank, world, local, device = cuda_rank()
    shapes = tensor_shapes(QWEN25_32B)
    tensors = [torch.full(s, 0.5 if rank == 0 else 0.0, dtype=torch.bfloat16, device=device) for _, s in shapes]
    params = sum(t.numel() for t in tensors)
    # One process group for the whole run, as a trainer would keep it: its set-up and tear-down are timed once;
    # the broadcast of every tensor is repeated (repetition 0 is a warmup).
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    dist.init_process_group("nccl", device_id=device)
    dist.barrier()
    torch.cuda.synchronize(device)
    init_time = time.perf_counter() - t0
    results = []
    for rep in range(a.reps + 1):
        torch.cuda.synchronize(device)
        dist.barrier()
        t1 = time.perf_counter()
        for t in tensors:
            dist.broadcast(t, src=0)
        t2 = time.perf_counter()
        torch.cuda.synchronize(device)
        t3 = time.perf_counter()
        rec = {"rep": rep, "warmup": rep == 0, "broadcast_time": t2 - t1, "sync_time": t3 - t2,
               "total_transfer_time": t3 - t1, "correct": bool(torch.all(tensors[-1][:4] == 0.5).item())}
        per_rank = [None] * world
        dist.all_gather_object(per_rank, rec)
        results.append({"rep": rep, "warmup": rep == 0, "per_rank": per_rank,
                        "total_transfer_time": max(r["total_transfer_time"] for r in per_rank)})
    dist.barrier()
    t4 = time.perf_counter()
    dist.destroy_process_group()
    destroy_time = time.perf_counter() - t4
    if rank == 0:
        meta = {"tool": "measure/torch/weight_sync_broadcast.py", "method": "broadcast", "model": "qwen2.5-32b",
                "spec": QWEN25_32B, "tensors": len(shapes), "parameters": params, "bytes": params * 2,
                "dtype": "bfloat16", "ranks": world, "root": 0, "init_process_group_time": init_time,
                "destroy_group_time": destroy_time, **run_metadata(device)}
        write_results(a.out, meta, results)


if __name__ == "__main__":
    main()
