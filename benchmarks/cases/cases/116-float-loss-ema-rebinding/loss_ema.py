import torch


def train(model, loader, optimizer, device="cuda"):
    ema = torch.zeros((), device=device)
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        ema = ema * 0.9 + loss.detach() * 0.1
        if step % 100 == 0:
            print(step, (ema / (1 - 0.9 ** (step + 1))).item())
