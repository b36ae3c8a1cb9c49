import torch

import speechtrain.data.masking as masking


def run_epoch(model, loader, optimizer, device):
    frames_seen = torch.zeros((), device=device)
    for feats, frame_mask, targets in loader:
        loss = model(feats.to(device), frame_mask.to(device), targets.to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        frames_seen += masking.num_frames(frame_mask)
    return frames_seen
