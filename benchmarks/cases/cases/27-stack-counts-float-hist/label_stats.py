import torch


@torch.no_grad()
def label_histogram(loader, num_labels, device="cuda"):
    hist = torch.zeros(num_labels, device=device)
    for batch in loader:
        labels = batch["labels"].to(device)
        counts = [(labels == k).sum() for k in range(num_labels)]
        hist += torch.stack(counts)
    return hist / hist.sum()
