import torch


def num_frames(frame_mask):
    """Frames that are not padding, summed over the batch."""
    return frame_mask.bool().sum()
