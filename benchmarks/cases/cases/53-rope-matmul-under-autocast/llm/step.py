import torch


def train_step(model, batch, optimizer, scaler=None):
    positions = torch.arange(batch["input_ids"].shape[1], device="cuda")[None].expand_as(batch["input_ids"])
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        out = model(batch["input_ids"], positions=positions, labels=batch["labels"])
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return out.loss.detach()
