import torch


def num_items_in_batch(accelerator, batch_samples):
    local = sum([(b["labels"].ne(-100)).sum() for b in batch_samples])
    return accelerator.gather(local).sum()


def train_step(accelerator, model, optimizer, batch_samples):
    total = num_items_in_batch(accelerator, batch_samples)
    for b in batch_samples:
        with accelerator.accumulate(model):
            out = model(**b)
            loss = out.loss_sum * accelerator.num_processes / total
            accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
