import torch

from visiontrain import correct_top1


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    seen = torch.zeros((), dtype=torch.int64, device=device)
    for images, target in loader:
        images, target = images.to(device), target.to(device)
        correct += correct_top1(model(images), target)
        seen += target.numel()
    return (correct.double() / seen.double()).item()
