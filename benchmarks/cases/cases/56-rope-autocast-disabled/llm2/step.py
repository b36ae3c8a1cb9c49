import torch


def train_step(model, batch, optimizer):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        out = model(batch["input_ids"], positions=batch["positions"], labels=batch["labels"])
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
