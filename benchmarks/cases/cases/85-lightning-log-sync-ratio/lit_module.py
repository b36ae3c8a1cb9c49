import lightning as L
import torch


class LitClassifier(L.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def validation_step(self, batch, batch_idx):
        images, target = batch
        logits = self.model(images)
        acc = (logits.argmax(-1) == target).float().mean()
        self.log("val_acc", acc, sync_dist=True)
        self.log("val_loss", torch.nn.functional.cross_entropy(logits, target), sync_dist=True)
