"""Cause 2: counts live in containers."""
from registry import case, hazard

# ---------------------------------------------------------------- 2-dict-subscript
case("22-stats-dict-tokens", "2-dict-subscript", {
    "throughput.py": '''
        import time

        import torch


        class ThroughputLogger:
            def __init__(self, device):
                self.stats = {}
                self.stats["tokens"] = torch.zeros((), device=device)
                self.stats["loss"] = torch.zeros((), device=device)
                self.stats["steps"] = 0
                self.start = time.time()

            def update(self, batch, loss):
                self.stats["tokens"] += batch["attention_mask"].bool().sum()
                self.stats["loss"] += loss.detach()
                self.stats["steps"] += 1

            def summary(self):
                elapsed = time.time() - self.start
                return {
                    "tokens": self.stats["tokens"].item(),
                    "tokens_per_s": self.stats["tokens"].item() / elapsed,
                    "mean_loss": self.stats["loss"].item() / max(self.stats["steps"], 1),
                }
    ''',
}, hazards=[hazard("throughput.py", 'self.stats["tokens"] = torch.zeros',
                   "the string-keyed slot self.stats['tokens'] is a float32 tensor that adds up "
                   "attention-mask token counts for the whole run")])

case("23-bf16-optimizer-state-step", "2-dict-subscript", {
    "lowmem_adamw.py": '''
        import math

        import torch


        class LowMemAdamW(torch.optim.Optimizer):
            """AdamW that keeps all of its state in bfloat16 to halve optimizer memory."""

            def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
                super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    beta1, beta2 = group["betas"]
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if not state:
                            state["step"] = torch.zeros((), dtype=torch.bfloat16, device=p.device)
                            state["exp_avg"] = torch.zeros_like(p, dtype=torch.bfloat16)
                            state["exp_avg_sq"] = torch.zeros_like(p, dtype=torch.bfloat16)
                        state["step"] += 1
                        step = state["step"].item()
                        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                        grad = p.grad.to(torch.bfloat16)
                        exp_avg.lerp_(grad, 1 - beta1)
                        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                        bias1 = 1 - beta1 ** step
                        bias2 = 1 - beta2 ** step
                        denom = (exp_avg_sq.float().sqrt() / math.sqrt(bias2)).add_(group["eps"])
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                        p.addcdiv_(exp_avg.float().to(p.dtype), denom.to(p.dtype), value=-group["lr"] / bias1)
    ''',
}, hazards=[hazard("lowmem_adamw.py", 'state["step"] = torch.zeros((), dtype=torch.bfloat16',
                   "state['step'] += 1 in bfloat16 stops at 256, so the bias corrections freeze "
                   "(pytorch/ao #4915)")])

case("24-fp32-optimizer-state-step", "2-dict-subscript", {
    "sgdw.py": '''
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
    ''',
}, lookalike=True, note="a float32 step counter (as torch.optim keeps it) is exact to 16.7M steps, "
                        "which no run reaches; the issue says to stay quiet")

case("25-stats-dict-int64", "2-dict-subscript", {
    "throughput.py": '''
        import torch


        class ThroughputLogger:
            def __init__(self, device):
                self.stats = {}
                self.stats["tokens"] = torch.zeros((), dtype=torch.int64, device=device)
                self.stats["loss"] = torch.zeros((), device=device)

            def update(self, batch, loss):
                self.stats["tokens"] += batch["attention_mask"].bool().sum()
                self.stats["loss"] += loss.detach()
    ''',
}, lookalike=True, note="the token slot is int64; the float32 slot sums losses")

# ---------------------------------------------------------------- 2-list-to-tensor
case("26-per-class-list-to-float-tensor", "2-list-to-tensor", {
    "class_weights.py": '''
        import torch


        class ClassPixelCounter:
            """Pixel frequency per class over a dataset, for ENet-style class weights."""

            def __init__(self, num_classes):
                self.num_classes = num_classes
                self.pixels = torch.zeros(num_classes, dtype=torch.float32)

            def update(self, target):
                per_class = []
                for c in range(self.num_classes):
                    per_class.append(int((target == c).sum()))
                self.pixels += torch.tensor(per_class, dtype=torch.float32)

            def class_weights(self, c=1.02):
                freq = self.pixels / self.pixels.sum()
                return 1.0 / torch.log(c + freq)
    ''',
}, hazards=[hazard("class_weights.py", ["self.pixels = torch.zeros(num_classes, dtype=torch.float32)",
                                        "self.pixels += torch.tensor(per_class"],
                   "per-class pixel counts are collected in a list, wrapped into a float32 tensor "
                   "and summed over the dataset; the background class passes 2^24 pixels")])

case("27-stack-counts-float-hist", "2-list-to-tensor", {
    "label_stats.py": '''
        import torch


        @torch.no_grad()
        def label_histogram(loader, num_labels, device="cuda"):
            hist = torch.zeros(num_labels, device=device)
            for batch in loader:
                labels = batch["labels"].to(device)
                counts = [(labels == k).sum() for k in range(num_labels)]
                hist += torch.stack(counts)
            return hist / hist.sum()
    ''',
}, hazards=[hazard("label_stats.py", "hist = torch.zeros(num_labels, device=device)",
                   "torch.stack of int64 counts is added into a float32 histogram over a whole "
                   "token-labelled dataset")])

case("28-stack-counts-int64", "2-list-to-tensor", {
    "label_stats.py": '''
        import torch


        class LabelCounter(torch.nn.Module):
            def __init__(self, num_labels):
                super().__init__()
                self.num_labels = num_labels
                self.register_buffer("counts", torch.zeros(num_labels, dtype=torch.long))

            @torch.no_grad()
            def forward(self, labels):
                per_label = [(labels == k).sum() for k in range(self.num_labels)]
                self.counts += torch.stack(per_label)
                return labels
    ''',
}, lookalike=True, note="stacked counts go into an int64 buffer")

case("29-per-class-loss-list", "2-list-to-tensor", {
    "class_loss.py": '''
        import torch


        class PerClassLoss:
            def __init__(self, num_classes):
                self.num_classes = num_classes
                self.loss_sum = torch.zeros(num_classes)
                self.batches = 0

            @torch.no_grad()
            def update(self, loss_map, target):
                per_class = []
                for c in range(self.num_classes):
                    m = target == c
                    per_class.append(loss_map[m].mean().item() if m.any() else 0.0)
                self.loss_sum += torch.tensor(per_class)
                self.batches += 1

            def compute(self):
                return self.loss_sum / max(self.batches, 1)
    ''',
}, lookalike=True, note="the list holds per-class mean losses (floats), not counts")

# ---------------------------------------------------------------- 2-dict-literal
case("30-dict-literal-counters", "2-dict-literal", {
    "lm_eval.py": '''
        import torch


        @torch.no_grad()
        def next_token_accuracy(model, loader, device):
            model.eval()
            totals = {
                "correct": torch.zeros((), device=device),
                "seen": torch.zeros((), device=device),
                "loss": torch.zeros((), device=device),
            }
            for batch in loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                out = model(**batch)
                labels = batch["labels"][:, 1:]
                pred = out.logits[:, :-1].argmax(-1)
                mask = labels != -100
                totals["correct"] += (pred.eq(labels) & mask).sum()
                totals["seen"] += mask.sum()
                totals["loss"] += out.loss.detach() * mask.sum()
            model.train()
            return {k: v.item() for k, v in totals.items()}
    ''',
}, hazards=[
    hazard("lm_eval.py", '"correct": torch.zeros((), device=device)',
           "a float32 dict slot adds up correct-token counts over the validation set"),
    hazard("lm_eval.py", '"seen": torch.zeros((), device=device)',
           "a float32 dict slot adds up target-token counts over the validation set"),
])

case("31-dict-literal-mixed-safe", "2-dict-literal", {
    "lm_eval.py": '''
        import torch


        @torch.no_grad()
        def validation_summary(model, loader, device):
            totals = {
                "loss": torch.zeros((), device=device),
                "tokens": torch.zeros((), dtype=torch.long, device=device),
                "batches": 0,
            }
            for batch in loader:
                out = model(**batch)
                n = (batch["labels"] != -100).sum()
                totals["loss"] += out.loss.detach() * n
                totals["tokens"] += n
                totals["batches"] += 1
            return totals["loss"].item() / max(totals["tokens"].item(), 1)
    ''',
}, lookalike=True, note="float32 holds a loss total; the token slot is int64 and batches a Python int")

# ---------------------------------------------------------------- 2-comprehension
case("32-list-comp-expert-usage", "2-comprehension", {
    "expert_usage.py": '''
        import torch


        class ExpertUsage:
            """Tokens routed to each expert of each MoE layer since the last reset."""

            def __init__(self, num_layers, num_experts, device="cuda"):
                self.num_experts = num_experts
                self.counts = [torch.zeros(num_experts, device=device) for _ in range(num_layers)]

            def record(self, layer, expert_idx):
                self.counts[layer] += torch.bincount(expert_idx.flatten(), minlength=self.num_experts)

            def imbalance(self):
                return [(c.max() / c.mean().clamp(min=1)).item() for c in self.counts]
    ''',
}, hazards=[hazard("expert_usage.py", "self.counts = [torch.zeros(num_experts, device=device)",
                   "a list comprehension creates float32 counters that receive bincount counts")])

case("33-dict-comp-split-counters", "2-comprehension", {
    "multi_split_eval.py": '''
        import torch


        class SplitTokenCounter:
            def __init__(self, splits, device="cpu"):
                self.seen = {split: torch.zeros((), device=device) for split in splits}

            def update(self, split, attention_mask):
                self.seen[split] += (attention_mask == 1).sum()

            def report(self):
                return {split: int(n.item()) for split, n in self.seen.items()}
    ''',
}, hazards=[hazard("multi_split_eval.py", "self.seen = {split: torch.zeros",
                   "a dict comprehension of float32 counters, each adding attention-mask token counts")])

case("34-list-comp-aux-losses", "2-comprehension", {
    "aux_losses.py": '''
        import torch


        class AuxLossTracker:
            def __init__(self, num_layers, device="cuda"):
                self.sums = [torch.zeros((), device=device) for _ in range(num_layers)]
                self.steps = 0

            def record(self, aux_losses):
                for i, loss in enumerate(aux_losses):
                    self.sums[i] += loss.detach().float()
                self.steps += 1

            def means(self):
                return [s.item() / max(self.steps, 1) for s in self.sums]
    ''',
}, lookalike=True, note="the comprehension's float32 tensors sum auxiliary losses (float values)")

case("35-list-comp-python-int-lengths", "2-comprehension", {
    "packing.py": '''
        import torch


        def packing_efficiency(batches, max_len):
            real = 0
            slots = 0
            for attention_mask in batches:
                lengths = [int(row.sum()) for row in attention_mask]
                real += sum(lengths)
                slots += len(lengths) * max_len
            return real / max(slots, 1)
    ''',
}, lookalike=True, note="the comprehension turns counts into Python ints, summed in Python ints")
