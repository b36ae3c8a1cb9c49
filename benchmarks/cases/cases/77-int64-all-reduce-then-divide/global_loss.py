import torch.distributed as dist


def global_mean_loss(per_token_loss, labels, group=None):
    mask = labels != -100
    loss_sum = (per_token_loss * mask).sum()
    num_tokens = mask.sum()
    dist.all_reduce(loss_sum, group=group)
    dist.all_reduce(num_tokens, group=group)
    return loss_sum / num_tokens.float()
