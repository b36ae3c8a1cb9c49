import torch
import torch.distributed as dist


def validate(model, loader):
    model.eval()
    num_correct = 0
    num_pixels = 0
    with torch.no_grad():
        for images, masks in loader:
            pred = model(images.cuda()).argmax(1)
            valid = masks.cuda() != 255
            num_correct += int((pred[valid] == masks.cuda()[valid]).sum())
            num_pixels += int(valid.sum())
    totals = torch.cuda.FloatTensor([num_correct, num_pixels])
    dist.all_reduce(totals)
    return (totals[0] / totals[1]).item()
