import torch


def _bump(counter, mask):
    counter += mask.sum()


@torch.no_grad()
def corpus_token_stats(loader, pad_id, unk_id):
    real_tokens = torch.zeros(())
    unknown_tokens = torch.zeros(())
    for input_ids in loader:
        _bump(real_tokens, input_ids != pad_id)
        _bump(unknown_tokens, input_ids == unk_id)
    return {"tokens": real_tokens.item(), "unk_rate": (unknown_tokens / real_tokens).item()}
