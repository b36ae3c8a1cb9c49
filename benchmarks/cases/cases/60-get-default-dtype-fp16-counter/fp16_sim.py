import torch


class UpdateCounter:
    def __init__(self, device="cuda"):
        self.count = torch.zeros((), dtype=torch.get_default_dtype(), device=device)

    def tick(self):
        self.count += 1

    def decay(self, base=0.999):
        n = self.count
        return min(base, (1 + n.item()) / (10 + n.item()))


def main(model, loader):
    torch.set_default_dtype(torch.float16)
    counter = UpdateCounter()
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    for batch in loader:
        model(batch).backward()
        counter.tick()
        d = counter.decay()
        for k, v in model.state_dict().items():
            ema[k].mul_(d).add_(v.detach(), alpha=1 - d)
