import torch


class ShardLoadBalancer:
    """Tokens dispatched to each expert-parallel rank since the start of training."""

    def __init__(self, world_size, device="cuda"):
        self.assigned = torch.zeros(world_size, dtype=torch.int32, device=device)

    def record(self, dest_rank):
        dest = dest_rank.flatten()
        self.assigned.scatter_add_(0, dest, torch.ones_like(dest, dtype=torch.int32))

    def most_loaded(self):
        return int(self.assigned.argmax())
