import torch
import torch.distributed._functional_collectives as funcol


def global_loss(loss_sum, mesh_group):
    return funcol.all_reduce(loss_sum.float(), "sum", mesh_group)
