import glob

import numpy as np


def count_shard_tokens(pattern):
    ntok_total = 0
    for path in sorted(glob.glob(pattern)):
        header = np.fromfile(path, dtype=np.int32, count=256)
        ntok_total += int(header[2])
    return ntok_total
