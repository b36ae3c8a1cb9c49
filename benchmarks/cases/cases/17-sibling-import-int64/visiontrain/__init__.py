from .counts import correct_top1
