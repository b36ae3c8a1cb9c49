import torch
import torch.nn.functional as F


def masked_lm_loss(logits, labels, ignore_index=-100):
    keep = labels.ne(ignore_index)
    loss = F.cross_entropy(logits[keep], labels[keep], reduction="sum")
    return loss, keep.sum()


class Trainer:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.tokens_trained = torch.zeros(1, device=device)

    def train_step(self, batch):
        logits = self.model(batch["input_ids"].to(self.device))
        loss_sum, n_tokens = masked_lm_loss(logits, batch["labels"].to(self.device))
        (loss_sum / n_tokens.clamp(min=1)).backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.tokens_trained += n_tokens
        return loss_sum.detach()
