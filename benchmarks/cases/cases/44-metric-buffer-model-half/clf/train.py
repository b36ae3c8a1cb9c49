import torch
import torch.nn.functional as F

from .model import Classifier


def train(backbone, loader, num_classes, steps_per_log=500):
    model = Classifier(backbone, num_classes).cuda().half()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (images, target) in enumerate(loader):
        logits = model(images.cuda().half(), target.cuda())
        loss = F.cross_entropy(logits.float(), target.cuda())
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % steps_per_log == 0:
            print(step, model.train_acc.compute().item())
