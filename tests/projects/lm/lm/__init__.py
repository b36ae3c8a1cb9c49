"""Training utilities for a small language model."""
from .metrics.tokens import count_targets

__all__ = ["count_targets"]
