from .counting import count_loss_tokens
from .loop import TrainLoop

__all__ = ["count_loss_tokens", "TrainLoop"]
