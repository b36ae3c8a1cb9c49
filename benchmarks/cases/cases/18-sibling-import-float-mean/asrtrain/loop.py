import torch

from .losses import ctc_loss_per_utt


def evaluate(model, loader, device):
    loss_sum = torch.zeros((), device=device)
    utterances = 0
    for feats, in_lens, targets, tgt_lens in loader:
        log_probs = model(feats.to(device)).log_softmax(-1).transpose(0, 1)
        per_utt = ctc_loss_per_utt(log_probs, targets, in_lens, tgt_lens)
        loss_sum += per_utt.sum()
        utterances += per_utt.numel()
    return loss_sum.item() / max(utterances, 1)
