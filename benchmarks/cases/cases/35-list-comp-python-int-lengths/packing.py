import torch


def packing_efficiency(batches, max_len):
    real = 0
    slots = 0
    for attention_mask in batches:
        lengths = [int(row.sum()) for row in attention_mask]
        real += sum(lengths)
        slots += len(lengths) * max_len
    return real / max(slots, 1)
