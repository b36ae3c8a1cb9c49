import torch


def ctc_loss_per_utt(log_probs, targets, in_lens, tgt_lens):
    loss = torch.nn.functional.ctc_loss(log_probs, targets, in_lens, tgt_lens, reduction="none")
    return loss / tgt_lens.clamp(min=1)
