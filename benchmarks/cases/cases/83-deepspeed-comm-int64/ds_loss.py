import deepspeed.comm as dist


def token_mean_loss(loss_sum, labels):
    n = (labels != -100).sum()
    dist.all_reduce(n)
    dist.all_reduce(loss_sum)
    return loss_sum / n
