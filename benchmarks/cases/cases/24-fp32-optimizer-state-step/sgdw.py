import torch


class WarmupSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, warmup_steps=2000):
        super().__init__(params, dict(lr=lr, momentum=momentum, warmup_steps=warmup_steps))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = torch.tensor(0.0)
                    state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                scale = min(1.0, state["step"].item() / group["warmup_steps"])
                buf = state["momentum_buffer"]
                buf.mul_(group["momentum"]).add_(p.grad)
                p.add_(buf, alpha=-group["lr"] * scale)
