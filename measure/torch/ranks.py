"""One process per GPU under torchrun: this process's rank, the world size, its local index and its CUDA device."""
import os

import torch


def cuda_rank():
    """(rank, world, local, device) from torchrun's environment; selects the device for this process."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    return rank, world, local, torch.device("cuda", local)
