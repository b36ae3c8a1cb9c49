import torch


def log_step(logger, step, loss, batch):
    tokens_in_step = (batch["labels"] != -100).sum()
    logger.log(
        {
            "train/loss": loss.item(),
            "train/tokens_in_step": float(tokens_in_step),
        },
        step=step,
    )
