import torch

from .optim import Lion


def main(build_model, loader):
    torch.set_default_dtype(torch.bfloat16)
    model = build_model().cuda()
    opt = Lion(model.parameters(), lr=3e-4)
    for batch in loader:
        loss = model(**batch).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
