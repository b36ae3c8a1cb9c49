import glob

import numpy as np

MAGIC = 20240520


def count_shard_tokens(pattern):
    ntok_total = 0
    for path in sorted(glob.glob(pattern)):
        with open(path, "rb") as f:
            header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        assert header[0] == MAGIC, f"bad magic in {path}"
        ntok_total += header[2]
    print(f"{ntok_total:,} tokens in {pattern}")
    return ntok_total
