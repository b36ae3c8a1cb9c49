import numpy as np


def token_frequencies(shard_paths, vocab_size):
    counts = np.zeros(vocab_size, dtype=np.int64)
    for path in shard_paths:
        ids = np.memmap(path, dtype=np.uint16, mode="r")
        counts += np.bincount(ids, minlength=vocab_size)
    return counts / counts.sum()
