"""One process per GPU under torchrun: this process's rank, the world size, its local index and its CUDA device."""
import json
import os
import socket
import sys
import time

import torch


def cuda_rank():
    """(rank, world, local, device) from torchrun's environment; selects the device for this process."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    return rank, world, local, torch.device("cuda", local)


def run_metadata(device):
    """What every reference run records about where and how it ran: host, versions, GPU, command line, knobs, date."""
    return {"host": socket.gethostname(), "torch": torch.__version__,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())), "gpu": torch.cuda.get_device_name(device),
            "command_line": " ".join(sys.argv),
            "env": {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "TORCH_", "NVSHMEM_"))},
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def write_results(path, meta, results):
    """Writes {"metadata", "results"} to `path` atomically (a temporary file, then a rename): no half file is left."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"metadata": meta, "results": results}, f, indent=1)
    os.replace(tmp, path)
