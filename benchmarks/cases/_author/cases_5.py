"""Cause 6: smaller model gaps. Cause 7: a safe fix that is not."""
from registry import case, hazard

# ---------------------------------------------------------------- 6-none-join
case("86-optional-buffer-none-branch", "6-none-join", {
    "load_tracker.py": '''
        import torch


        class ExpertLoadTracker:
            def __init__(self, num_experts, track=True, device="cuda"):
                if track:
                    self.load = torch.zeros(num_experts, device=device)
                else:
                    self.load = None

            def update(self, topk_idx):
                if self.load is not None:
                    self.load += torch.bincount(topk_idx.flatten(), minlength=self.load.numel())

            def snapshot(self):
                return None if self.load is None else self.load.clone()
    ''',
}, hazards=[hazard("load_tracker.py", "self.load = torch.zeros(num_experts, device=device)",
                   "one branch sets the buffer to None; the other makes it float32 and it adds up "
                   "bincount counts for the whole run")])

case("87-optional-buffer-none-int64", "6-none-join", {
    "load_tracker.py": '''
        import torch


        class ExpertLoadTracker:
            def __init__(self, num_experts, track=True, device="cuda"):
                if track:
                    self.load = torch.zeros(num_experts, dtype=torch.int64, device=device)
                else:
                    self.load = None

            def update(self, topk_idx):
                if self.load is not None:
                    self.load += torch.bincount(topk_idx.flatten(), minlength=self.load.numel())
    ''',
}, lookalike=True, note="the non-None branch is int64")

# ---------------------------------------------------------------- 6-float-converted-count
case("88-bincount-float-into-usage", "6-float-converted-count", {
    "codebook.py": '''
        import torch


        @torch.no_grad()
        def codebook_usage(vq_model, loader, codebook_size, device="cuda"):
            usage = torch.zeros(codebook_size, device=device)
            for images in loader:
                codes = vq_model.encode(images.to(device))
                usage += torch.bincount(codes.flatten(), minlength=codebook_size).float()
            probs = usage / usage.sum()
            perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
            return usage, perplexity
    ''',
}, hazards=[hazard("codebook.py", ["usage = torch.zeros(codebook_size, device=device)",
                                   "usage += torch.bincount(codes.flatten(), minlength=codebook_size).float()"],
                   "bincount(...).float() is still a count; summed over a dataset of 32x32 code maps a "
                   "popular code passes 2^24")])

case("89-mask-sum-to-float32-into-total", "6-float-converted-count", {
    "pack_stats.py": '''
        import torch


        class PackedDatasetStats:
            def __init__(self):
                self.token_count = torch.zeros(())
                self.sequences = 0

            def observe(self, attention_mask):
                self.token_count += (attention_mask == 1).sum().to(torch.float32)
                self.sequences += attention_mask.shape[0]
    ''',
}, hazards=[hazard("pack_stats.py", ["self.token_count = torch.zeros(())",
                                     "self.token_count += (attention_mask == 1).sum().to(torch.float32)"],
                   "the count is converted to float32 and then accumulated over the dataset")])

case("90-float-count-ratio-once", "6-float-converted-count", {
    "quick_eval.py": '''
        import torch


        @torch.no_grad()
        def batch_report(logits, target):
            correct = (logits.argmax(dim=-1) == target).sum()
            total = torch.tensor(target.numel())
            accuracy = correct.float() / total.float()
            return {"accuracy": accuracy.item(), "correct": int(correct), "total": int(total)}
    ''',
}, lookalike=True, note="one batch's exact counts are made float once for a ratio")

case("91-bincount-probs-ema", "6-float-converted-count", {
    "codebook_ema.py": '''
        import torch
        import torch.nn as nn


        class UsageEMA(nn.Module):
            def __init__(self, codebook_size, decay=0.99):
                super().__init__()
                self.codebook_size = codebook_size
                self.decay = decay
                self.register_buffer("usage", torch.full((codebook_size,), 1.0 / codebook_size))

            @torch.no_grad()
            def forward(self, codes):
                probs = torch.bincount(codes.flatten(), minlength=self.codebook_size).float() / codes.numel()
                self.usage.mul_(self.decay).add_(probs, alpha=1 - self.decay)
                return self.usage
    ''',
}, lookalike=True, note="the bincount is normalised to a probability before it enters the EMA")

# ---------------------------------------------------------------- 6-floating-guard
case("92-guard-routes-counts-to-int", "6-floating-guard", {
    "running_sums.py": '''
        import torch


        class RunningSums:
            def __init__(self, device="cuda"):
                self.float_total = torch.zeros((), device=device)
                self.int_total = torch.zeros((), dtype=torch.int64, device=device)

            def _add(self, v):
                if not torch.is_floating_point(v):
                    self.int_total += v
                else:
                    self.float_total += v

            def update(self, loss, labels):
                self._add(loss.detach())
                self._add((labels != -100).sum())
    ''',
}, lookalike=True, note="the is_floating_point guard sends the int64 count to the int64 total; the "
                        "float32 total only receives the loss")

case("93-guard-casts-float-count-state", "6-floating-guard", {
    "streaming_mse.py": '''
        import torch


        class StreamingMSE:
            def __init__(self):
                self.states = {
                    "sum_sq": torch.zeros(()),
                    "n_obs": torch.zeros(()),
                }

            def to(self, dtype):
                for k, v in self.states.items():
                    if torch.is_floating_point(v):
                        self.states[k] = v.to(dtype)
                return self

            def update(self, preds, target):
                self.states["sum_sq"] += ((preds - target) ** 2).sum()
                self.states["n_obs"] += preds.shape[0]

            def compute(self):
                return self.states["sum_sq"] / self.states["n_obs"]


        def make_metric():
            return StreamingMSE().to(torch.float16)
    ''',
}, hazards=[hazard("streaming_mse.py", ['"n_obs": torch.zeros(()),', "self.states[k] = v.to(dtype)",
                                          "return StreamingMSE().to(torch.float16)"],
                   "the guard lets floating states through to the float16 cast, and the sample count is "
                   "a floating state: n_obs stops at 2,048")])

case("94-guard-keeps-int-count-out", "6-floating-guard", {
    "streaming_mse.py": '''
        import torch


        class StreamingMSE:
            def __init__(self):
                self.states = {
                    "sum_sq": torch.zeros(()),
                    "n_obs": torch.zeros((), dtype=torch.long),
                }

            def to(self, dtype):
                for k, v in self.states.items():
                    if not torch.is_floating_point(v):
                        continue
                    self.states[k] = v.to(dtype)
                return self

            def update(self, preds, target):
                self.states["sum_sq"] += ((preds.float() - target.float()) ** 2).sum().to(self.states["sum_sq"].dtype)
                self.states["n_obs"] += preds.numel()

            def compute(self):
                return self.states["sum_sq"].float() / self.states["n_obs"]


        def make_metric():
            return StreamingMSE().to(torch.float16)
    ''',
}, lookalike=True, note="`if not torch.is_floating_point(v): continue` keeps the int64 count out of the "
                        "float16 cast")

# ---------------------------------------------------------------- 6-len-string
case("95-len-of-text-float-total", "6-len-string", {
    "corpus_stats.py": '''
        import torch


        class CorpusStats:
            def __init__(self, device="cpu"):
                self.chars = torch.zeros((), device=device)
                self.docs = 0

            def update(self, batch):
                for text in batch["text"]:
                    self.chars += len(text)
                self.docs += len(batch["text"])

            def mean_chars(self):
                return self.chars.item() / max(self.docs, 1)
    ''',
}, hazards=[hazard("corpus_stats.py", "self.chars = torch.zeros((), device=device)",
                   "len() of a string counts characters, an element count: a corpus passes 2^24 "
                   "characters within a few thousand documents")])

case("96-len-of-text-batch-mean", "6-len-string", {
    "length_filter.py": '''
        import torch


        def length_outliers(texts, z=3.0):
            lengths = torch.tensor([len(t) for t in texts], dtype=torch.float32)
            mean, std = lengths.mean(), lengths.std()
            return [t for t, n in zip(texts, lengths.tolist()) if abs(n - mean.item()) > z * std.item()]
    ''',
}, lookalike=True, note="one batch of string lengths in float32 (each far below 2^24) for a mean and "
                        "std; nothing accumulates")

# ---------------------------------------------------------------- 6-ones-like-cumsum
case("97-ones-like-masked-sum", "6-ones-like-cumsum", {
    "token_meter.py": '''
        import torch


        class TokenMeter:
            def __init__(self, pad_id, device="cuda"):
                self.pad_id = pad_id
                self.tokens_seen = torch.zeros((), device=device)

            def update(self, input_ids):
                valid = torch.ones_like(input_ids).masked_fill(input_ids == self.pad_id, 0)
                self.tokens_seen += valid.sum()
    ''',
}, hazards=[hazard("token_meter.py", "self.tokens_seen = torch.zeros((), device=device)",
                   "ones_like(input_ids) with padding zeroed, summed, is a token count; float32 total")])

case("98-cumsum-one-hot-in-gate-dtype", "6-ones-like-cumsum", {
    "top1_gate.py": '''
        import torch
        import torch.nn.functional as F


        def top1_dispatch(gates, capacity):
            """gates: [tokens, experts] in the model's dtype. Returns the slot of each kept token."""
            expert_idx = gates.argmax(dim=-1)
            mask = F.one_hot(expert_idx, num_classes=gates.shape[-1]).type_as(gates)
            locations = torch.cumsum(mask, dim=0) - 1
            keep = (locations < capacity) & mask.bool()
            slot = (locations * mask).sum(dim=-1).long()
            return expert_idx, slot, keep.any(dim=-1)
    ''',
}, hazards=[hazard("top1_gate.py", ["mask = F.one_hot(expert_idx, num_classes=gates.shape[-1]).type_as(gates)",
                                    "locations = torch.cumsum(mask, dim=0) - 1"],
                   "a cumsum of a one-hot mask counts tokens per expert; in the gates' bf16 dtype "
                   "positions above 256 collide, so two tokens get the same capacity slot")])

case("99-ones-like-loss-weights", "6-ones-like-cumsum", {
    "weighted_loss.py": '''
        import torch
        import torch.nn.functional as F


        def weighted_token_loss(logits, labels, prompt_mask, prompt_weight=0.1):
            loss = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
            weights = torch.ones_like(loss)
            weights = weights.masked_fill(prompt_mask, prompt_weight)
            return (loss * weights).sum() / weights.sum()
    ''',
}, lookalike=True, note="ones_like(loss) builds float loss weights (0.1 and 1.0), not a count; "
                        "weights.sum() is a weighted normaliser used once")

case("100-cumsum-int-positions", "6-ones-like-cumsum", {
    "positions.py": '''
        import torch
        import torch.nn as nn


        class LearnedPositions(nn.Module):
            def __init__(self, max_positions, dim):
                super().__init__()
                self.wpe = nn.Embedding(max_positions, dim)

            def forward(self, attention_mask):
                position_ids = attention_mask.long().cumsum(-1) - 1
                position_ids = position_ids.masked_fill(attention_mask == 0, 1)
                return self.wpe(position_ids)
    ''',
}, lookalike=True, note="positions from a cumsum stay int64 and index an embedding")

# ---------------------------------------------------------------- 6-int32-collective-scatter
case("101-int32-consumed-tokens-allreduce", "6-int32-collective-scatter", {
    "train_state.py": '''
        import torch
        import torch.distributed as dist


        class TrainState:
            def __init__(self, device):
                self.step = 0
                self.local_tokens = torch.zeros((), dtype=torch.int32, device=device)

            def advance(self, attention_mask):
                self.local_tokens += torch.count_nonzero(attention_mask)
                self.step += 1

            def global_consumed_tokens(self, group=None):
                total = self.local_tokens.clone()
                dist.all_reduce(total, group=group)
                return total.item()

            def state_dict(self):
                return {"step": self.step, "consumed_tokens": self.global_consumed_tokens()}
    ''',
}, hazards=[hazard("train_state.py", ["self.local_tokens = torch.zeros((), dtype=torch.int32",
                                      "dist.all_reduce(total, group=group)"],
                   "a run's consumed tokens in int32, then summed over all ranks: wraps past 2^31 "
                   "(Megatron-Bridge PR #3312)")])

case("102-int32-scatter-add-owner-rank", "6-int32-collective-scatter", {
    "shard_balance.py": '''
        import torch


        class ShardLoadBalancer:
            """Tokens dispatched to each expert-parallel rank since the start of training."""

            def __init__(self, world_size, device="cuda"):
                self.assigned = torch.zeros(world_size, dtype=torch.int32, device=device)

            def record(self, dest_rank):
                dest = dest_rank.flatten()
                self.assigned.scatter_add_(0, dest, torch.ones_like(dest, dtype=torch.int32))

            def most_loaded(self):
                return int(self.assigned.argmax())
    ''',
}, hazards=[hazard("shard_balance.py", ["self.assigned = torch.zeros(world_size, dtype=torch.int32",
                                        "self.assigned.scatter_add_(0, dest, torch.ones_like(dest, dtype=torch.int32))"],
                   "an int32 scatter_add_ adds token counts per rank for the whole run: wraps at 2^31")])

case("103-int32-cu-seqlens", "6-int32-collective-scatter", {
    "varlen.py": '''
        import torch
        import torch.nn.functional as F


        def unpad_for_varlen_attention(hidden, attention_mask):
            seqlens = attention_mask.sum(dim=-1, dtype=torch.int32)
            indices = torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten()
            max_seqlen = int(seqlens.max())
            cu_seqlens = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
            return hidden.flatten(0, 1)[indices], indices, cu_seqlens, max_seqlen
    ''',
}, lookalike=True, note="flash-attention's cu_seqlens must be int32; they hold one batch's token "
                        "offsets, far below 2^31")

case("104-int32-capped-expert-fill", "6-int32-collective-scatter", {
    "capacity.py": '''
        import torch


        def expert_fill(topk_idx, num_experts, capacity):
            """Slots used per expert in one batch; each of the k choices can fill at most `capacity`."""
            fill = torch.zeros(num_experts, dtype=torch.int32, device=topk_idx.device)
            for k in range(topk_idx.shape[1]):
                per_expert = torch.bincount(topk_idx[:, k], minlength=num_experts)
                fill += per_expert.clamp(max=capacity).to(torch.int32)
            return fill
    ''',
}, lookalike=True, note="one batch, each addition clamped to the expert capacity: top-k times a few "
                        "thousand, far below 2^31")

# ---------------------------------------------------------------- 6-lowprec-plus-one
case("105-config-lowprec-step-counter", "6-lowprec-plus-one", {
    "warmup_temp.py": '''
        import torch
        import torch.nn as nn


        class LearnedTemperature(nn.Module):
            """Contrastive temperature that is frozen for the first `warmup` steps."""

            def __init__(self, cfg, init=0.07, warmup=2000):
                super().__init__()
                dtype = torch.bfloat16 if cfg.bf16 else torch.float16
                self.log_t = nn.Parameter(torch.tensor(init).log().to(dtype))
                self.register_buffer("steps", torch.zeros((), dtype=dtype))
                self.warmup = warmup

            def forward(self, logits):
                if self.training:
                    self.steps += 1
                t = self.log_t.exp()
                if self.steps.item() < self.warmup:
                    t = t.detach()
                return logits / t
    ''',
}, hazards=[hazard("warmup_temp.py", 'self.register_buffer("steps", torch.zeros((), dtype=dtype))',
                   "`+= 1` in bf16 stops at 256 (fp16: 2,048), so the 2,000-step warmup never ends")])

case("106-half-ema-update-counter", "6-lowprec-plus-one", {
    "ema.py": '''
        import torch


        class ModelEMA:
            def __init__(self, model, decay=0.9999, device="cuda"):
                self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}
                self.decay = decay
                self.num_updates = torch.zeros(1, device=device).half()

            @torch.no_grad()
            def update(self, model):
                self.num_updates += 1
                n = self.num_updates.item()
                d = min(self.decay, (1 + n) / (10 + n))
                for k, v in model.state_dict().items():
                    if v.dtype.is_floating_point:
                        self.shadow[k].mul_(d).add_(v.detach(), alpha=1 - d)
    ''',
}, hazards=[hazard("ema.py", "self.num_updates = torch.zeros(1, device=device).half()",
                   "a float16 update counter stops at 2,048, so the EMA decay ramp stops early")])

case("107-fp32-step-counter", "6-lowprec-plus-one", {
    "scheduler.py": '''
        import math

        import torch


        class CosineWithWarmup:
            def __init__(self, optimizer, warmup, total, device="cuda"):
                self.optimizer = optimizer
                self.warmup = warmup
                self.total = total
                self.base = [g["lr"] for g in optimizer.param_groups]
                self.step_t = torch.tensor(0.0, device=device)

            def step(self):
                self.step_t += 1
                s = self.step_t.item()
                if s < self.warmup:
                    scale = s / self.warmup
                else:
                    scale = 0.5 * (1 + math.cos(math.pi * (s - self.warmup) / (self.total - self.warmup)))
                for g, base in zip(self.optimizer.param_groups, self.base):
                    g["lr"] = base * scale
    ''',
}, lookalike=True, note="a float32 step counter is exact to 16.7M steps, which no schedule reaches")

case("108-bf16-value-ema", "6-lowprec-plus-one", {
    "feature_ema.py": '''
        import torch
        import torch.nn as nn


        class CenterEMA(nn.Module):
            """DINO-style centre of the teacher outputs, kept in bf16."""

            def __init__(self, dim, momentum=0.9):
                super().__init__()
                self.momentum = momentum
                self.register_buffer("center", torch.zeros(1, dim, dtype=torch.bfloat16))

            @torch.no_grad()
            def update(self, teacher_out):
                batch_center = teacher_out.mean(dim=0, keepdim=True).to(self.center.dtype)
                self.center.mul_(self.momentum).add_(batch_center, alpha=1 - self.momentum)
    ''',
}, lookalike=True, note="a bf16 EMA of float features: no counter")

# ---------------------------------------------------------------- 6-numpy-int32
case("109-numpy-int32-header-total", "6-numpy-int32", {
    "shard_tokens.py": '''
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
    ''',
}, hazards=[hazard("shard_tokens.py", ["ntok_total = 0", "header = np.frombuffer(", "ntok_total += header[2]"],
                   "under NumPy 2 a Python int plus np.int32 stays np.int32: the total wraps past 2^31 "
                   "(llm.c PR #822: 10.25B tokens reported as 1.66B)")])

case("110-numpy-int32-vocab-histogram", "6-numpy-int32", {
    "vocab_freq.py": '''
        import numpy as np


        def token_frequencies(shard_paths, vocab_size):
            counts = np.zeros(vocab_size, dtype=np.int32)
            for path in shard_paths:
                ids = np.memmap(path, dtype=np.uint16, mode="r")
                counts += np.bincount(ids, minlength=vocab_size)
            return counts / counts.sum()
    ''',
}, hazards=[hazard("vocab_freq.py", "counts = np.zeros(vocab_size, dtype=np.int32)",
                   "an in-place add into an np.int32 array casts the int64 bincount down (same kind) "
                   "and wraps once a frequent token passes 2^31 occurrences")])

case("111-numpy-int64-vocab-histogram", "6-numpy-int32", {
    "vocab_freq.py": '''
        import numpy as np


        def token_frequencies(shard_paths, vocab_size):
            counts = np.zeros(vocab_size, dtype=np.int64)
            for path in shard_paths:
                ids = np.memmap(path, dtype=np.uint16, mode="r")
                counts += np.bincount(ids, minlength=vocab_size)
            return counts / counts.sum()
    ''',
}, lookalike=True, note="the histogram is int64")

case("112-numpy-header-python-int", "6-numpy-int32", {
    "shard_tokens.py": '''
        import glob

        import numpy as np


        def count_shard_tokens(pattern):
            ntok_total = 0
            for path in sorted(glob.glob(pattern)):
                header = np.fromfile(path, dtype=np.int32, count=256)
                ntok_total += int(header[2])
            return ntok_total
    ''',
}, lookalike=True, note="int() makes each shard's count a Python int: the total cannot wrap (the "
                        "llm.c fix)")

# ---------------------------------------------------------------- 7-float-rebinding
case("113-decayed-expert-load", "7-float-rebinding", {
    "decayed_load.py": '''
        import torch


        class DecayedExpertLoad:
            def __init__(self, num_experts, decay=0.5, device="cuda"):
                self.decay = decay
                self.load = torch.zeros(num_experts, device=device)

            def observe(self, expert_idx):
                self.load += torch.bincount(expert_idx.flatten(), minlength=self.load.numel())

            def end_of_window(self):
                self.load = self.load * self.decay
                return self.load / self.load.sum().clamp(min=1)
    ''',
}, hazards=[hazard("decayed_load.py", "self.load = torch.zeros(num_experts, device=device)",
                   "counts are accumulated in float32, but end_of_window rebinds the total through float "
                   "arithmetic: an int64 fix would turn float again, so no fix may be offered",
                   fix="none")])

case("114-token-count-rescaled", "7-float-rebinding", {
    "elastic_counter.py": '''
        import torch


        class ElasticTokenCounter:
            def __init__(self, device="cuda"):
                self.tokens = torch.zeros((), device=device)

            def update(self, labels):
                self.tokens += (labels != -100).sum()

            def on_world_size_change(self, old_world, new_world):
                self.tokens = self.tokens * (new_world / old_world)

            def value(self):
                return self.tokens.item()
    ''',
}, hazards=[hazard("elastic_counter.py", "self.tokens = torch.zeros((), device=device)",
                   "a float32 token total (a hazard), rebound through a float rescale: the int64 fix "
                   "would silently become float32 again there, so it is not safe",
                   fix="none")])

case("115-int64-floor-halving", "7-float-rebinding", {
    "halving.py": '''
        import torch


        class HalvingCounts:
            def __init__(self, num_bins, device="cuda"):
                self.counts = torch.zeros(num_bins, dtype=torch.int64, device=device)

            def observe(self, bins):
                self.counts += torch.bincount(bins, minlength=self.counts.numel())

            def age(self):
                self.counts = self.counts // 2
    ''',
}, lookalike=True, note="int64 counts halved with floor division stay int64")

case("116-float-loss-ema-rebinding", "7-float-rebinding", {
    "loss_ema.py": '''
        import torch


        def train(model, loader, optimizer, device="cuda"):
            ema = torch.zeros((), device=device)
            for step, batch in enumerate(loader):
                loss = model(**batch).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                ema = ema * 0.9 + loss.detach() * 0.1
                if step % 100 == 0:
                    print(step, (ema / (1 - 0.9 ** (step + 1))).item())
    ''',
}, lookalike=True, note="a float EMA of the loss rebound each step: no count")
