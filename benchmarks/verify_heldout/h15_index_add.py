import torch


def bucket_hits(bucket_ids, n_buckets=6):
    hits = torch.zeros(n_buckets, dtype=torch.bfloat16)
    for ids in bucket_ids:
        hits.index_add_(0, ids, torch.ones(ids.numel(), dtype=torch.bfloat16))
    print(hits.tolist())
