import torch


def train_step(accelerator, model, batch, optimizer):
    out = model(**batch)
    num_tokens = (batch["labels"] != -100).sum()
    global_tokens = accelerator.reduce(num_tokens.float(), reduction="sum")
    loss = out.loss_sum * accelerator.num_processes / global_tokens
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    return global_tokens
