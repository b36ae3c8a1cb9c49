import torch
import torch.distributed._functional_collectives as funcol


def global_tokens(loss_mask, mesh_group):
    local = (loss_mask != 0).sum().float()
    return funcol.all_reduce(local, "sum", mesh_group)
