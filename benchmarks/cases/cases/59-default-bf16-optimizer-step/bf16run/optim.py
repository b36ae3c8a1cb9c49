import torch


class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, warmup=1000):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay, warmup=warmup))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                state["step"] += 1
                lr = group["lr"] * min(1.0, state["step"].item() / group["warmup"])
                update = state["exp_avg"].mul(beta1).add(p.grad, alpha=1 - beta1).sign_()
                p.mul_(1 - lr * group["weight_decay"]).add_(update, alpha=-lr)
                state["exp_avg"].mul_(beta2).add_(p.grad, alpha=1 - beta2)
