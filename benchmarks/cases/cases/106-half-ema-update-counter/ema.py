import torch


class ModelEMA:
    def __init__(self, model, decay=0.9999, device="cuda"):
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.decay = decay
        self.num_updates = torch.zeros(1, device=device).half()

    @torch.no_grad()
    def update(self, model):
        self.num_updates += 1
        n = self.num_updates.item()
        d = min(self.decay, (1 + n) / (10 + n))
        for k, v in model.state_dict().items():
            if v.dtype.is_floating_point:
                self.shadow[k].mul_(d).add_(v.detach(), alpha=1 - d)
