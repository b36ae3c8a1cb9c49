import lightning as L
import torch


class LitTagger(L.LightningModule):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def validation_step(self, batch, batch_idx):
        logits = self.model(batch["input_ids"])
        mask = batch["labels"] != -100
        correct = ((logits.argmax(-1) == batch["labels"]) & mask).sum().float()
        seen = mask.sum().float()
        correct = self.trainer.strategy.reduce(correct, reduce_op="sum")
        seen = self.trainer.strategy.reduce(seen, reduce_op="sum")
        self.log("val_token_acc", correct / seen)
