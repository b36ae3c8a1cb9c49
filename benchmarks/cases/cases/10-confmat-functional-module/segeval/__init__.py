from .confusion import ConfusionMatrix

__all__ = ["ConfusionMatrix"]
