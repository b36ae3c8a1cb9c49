import torch


def zero_grads(params):
    zeros = torch.cuda.FloatTensor([0.0])
    for p in params:
        zeros += (p.grad == 0).sum()
    print(zeros.item())
