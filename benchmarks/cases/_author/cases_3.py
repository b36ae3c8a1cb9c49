"""Cause 3: counts and positions sit in the dtype the model runs in, not one written on the line."""
from registry import case, hazard

# ---------------------------------------------------------------- 3-dtype-of-data
case("36-moe-counts-in-hidden-dtype", "3-dtype-of-data", {
    "dispatch.py": '''
        import torch
        import torch.nn as nn


        class CapacityDispatcher(nn.Module):
            def __init__(self, num_experts, capacity_factor=1.25):
                super().__init__()
                self.num_experts = num_experts
                self.capacity_factor = capacity_factor

            def forward(self, hidden_states, expert_idx):
                # hidden_states: [tokens, hidden]; expert_idx: [tokens, k]
                flat_idx = expert_idx.flatten()
                tokens_per_expert = torch.zeros(self.num_experts, dtype=hidden_states.dtype, device=hidden_states.device)
                tokens_per_expert.scatter_add_(0, flat_idx, torch.ones_like(flat_idx, dtype=hidden_states.dtype))
                capacity = int(self.capacity_factor * flat_idx.numel() / self.num_experts)
                dropped = (tokens_per_expert - capacity).clamp(min=0).sum()
                return tokens_per_expert, dropped
    ''',
}, hazards=[hazard("dispatch.py", ["tokens_per_expert = torch.zeros(self.num_experts, dtype=hidden_states.dtype",
                                   "tokens_per_expert.scatter_add_("],
                   "tokens per expert are counted in the hidden states' dtype, bfloat16 in bf16 "
                   "training: thousands of tokens per expert round to steps of 8-32 (Megatron #7081)")])

case("37-ptm-token-count-logits-dtype", "3-dtype-of-data", {
    "confidence.py": '''
        import torch


        def predicted_tm_score(pae_logits, bin_centers, token_mask):
            """pTM from predicted-aligned-error logits [B, N, N, bins]."""
            probs = pae_logits.softmax(dim=-1)
            n_tokens = token_mask.bool().sum(dim=-1).to(pae_logits.dtype)
            d0 = 1.24 * (n_tokens.clamp(min=19) - 15) ** (1.0 / 3) - 1.8
            tm_term = 1.0 / (1.0 + (bin_centers[None, :] / d0[:, None]) ** 2)
            per_pair = (probs * tm_term[:, None, None, :]).sum(dim=-1)
            pair_mask = token_mask[:, :, None] * token_mask[:, None, :]
            per_row = (per_pair * pair_mask).sum(dim=-1) / n_tokens[:, None]
            return per_row.max(dim=-1).values
    ''',
}, hazards=[hazard("confidence.py", "n_tokens = token_mask.bool().sum(dim=-1).to(pae_logits.dtype)",
                   "the residue count is cast to the logits' dtype; with bf16 logits 257 becomes 256 "
                   "and 431 becomes 432, skewing d0 (chai-lab #425)")])

case("38-mean-pool-new-ones", "3-dtype-of-data", {
    "pooling.py": '''
        import torch.nn as nn


        class MaskedMeanPool(nn.Module):
            def forward(self, hidden, attention_mask):
                ones = hidden.new_ones(hidden.shape[:2])
                valid = ones.masked_fill(attention_mask == 0, 0.0)
                lengths = valid.sum(dim=1, keepdim=True)
                summed = (hidden * valid.unsqueeze(-1)).sum(dim=1)
                return summed / lengths.clamp(min=1)
    ''',
}, hazards=[hazard("pooling.py", ["ones = hidden.new_ones(", "valid = ones.masked_fill(attention_mask == 0, 0.0)",
                                  "lengths = valid.sum(dim=1"],
                   "sequence lengths are counted in hidden.new_ones(...), i.e. in the model's dtype; "
                   "in bf16 a 4,097-token document is counted as 4,096")])

case("39-moe-counts-explicit-long", "3-dtype-of-data", {
    "dispatch.py": '''
        import torch
        import torch.nn as nn


        class CapacityDispatcher(nn.Module):
            def __init__(self, num_experts):
                super().__init__()
                self.num_experts = num_experts

            def forward(self, hidden_states, expert_idx):
                flat_idx = expert_idx.flatten()
                tokens_per_expert = hidden_states.new_zeros(self.num_experts, dtype=torch.long)
                tokens_per_expert.scatter_add_(0, flat_idx, torch.ones_like(flat_idx))
                return tokens_per_expert
    ''',
}, lookalike=True, note="new_zeros with an explicit dtype=torch.long and int64 ones: the counts are exact")

case("40-ball-query-capped-count", "3-dtype-of-data", {
    "point_ops.py": '''
        import torch


        def ball_query_mean(features, dists, radius, max_neighbors=32):
            """Average the features of at most `max_neighbors` points within `radius`.

            features: [B, N, C]; dists: [B, M, N] distances from M centres to N points.
            """
            in_ball = dists < radius
            order = torch.argsort(in_ball.to(torch.int8), dim=-1, descending=True)
            idx = order[..., :max_neighbors]
            taken = torch.gather(in_ball, -1, idx)
            n_neighbors = taken.sum(dim=-1, keepdim=True).to(features.dtype)
            batch = torch.arange(features.shape[0], device=features.device)[:, None, None]
            gathered = features[batch, idx]
            summed = (gathered * taken.unsqueeze(-1).to(features.dtype)).sum(dim=2)
            return summed / n_neighbors.clamp(min=1)
    ''',
}, lookalike=True, note="the neighbour count is taken over at most max_neighbors=32 slots, far below "
                        "256, so it is exact even in bfloat16")

case("41-zeros-like-hidden-layer-mix", "3-dtype-of-data", {
    "scalar_mix.py": '''
        import torch
        import torch.nn as nn


        class ScalarMix(nn.Module):
            """Learned weighted sum of the hidden states of every layer."""

            def __init__(self, num_layers):
                super().__init__()
                self.weights = nn.Parameter(torch.zeros(num_layers))
                self.gamma = nn.Parameter(torch.ones(()))

            def forward(self, layer_states):
                w = self.weights.softmax(dim=0)
                mixed = torch.zeros_like(layer_states[0])
                for i, h in enumerate(layer_states):
                    mixed += w[i] * h
                return self.gamma * mixed
    ''',
}, lookalike=True, note="zeros_like(hidden) accumulates weighted hidden states (float values)")

# ---------------------------------------------------------------- 3-helper-dtype-arg
case("42-helper-counts-in-router-dtype", "3-helper-dtype-arg", {
    "switch_aux.py": '''
        import torch
        import torch.nn as nn


        def expert_counts(expert_idx, num_experts, dtype):
            return torch.bincount(expert_idx.flatten(), minlength=num_experts).to(dtype)


        class SwitchBalanceLoss(nn.Module):
            def __init__(self, num_experts):
                super().__init__()
                self.num_experts = num_experts

            def forward(self, router_logits, expert_idx):
                probs = router_logits.softmax(dim=-1)
                counts = expert_counts(expert_idx, self.num_experts, dtype=router_logits.dtype)
                fraction = counts / expert_idx.numel()
                return self.num_experts * (fraction * probs.mean(dim=0)).sum()
    ''',
}, hazards=[hazard("switch_aux.py", ["minlength=num_experts).to(dtype)",
                                     "counts = expert_counts(expert_idx, self.num_experts, dtype=router_logits.dtype)"],
                   "the helper counts tokens in the dtype it is given; the caller passes the router "
                   "logits' dtype (bf16 in bf16 training), so per-expert counts above 256 round")])

case("43-helper-counts-float32-ratio", "3-helper-dtype-arg", {
    "switch_aux.py": '''
        import torch
        import torch.nn as nn


        def expert_counts(expert_idx, num_experts, dtype):
            return torch.bincount(expert_idx.flatten(), minlength=num_experts).to(dtype)


        class SwitchBalanceLoss(nn.Module):
            def __init__(self, num_experts):
                super().__init__()
                self.num_experts = num_experts

            def forward(self, router_logits, expert_idx):
                probs = router_logits.float().softmax(dim=-1)
                counts = expert_counts(expert_idx, self.num_experts, dtype=torch.float32)
                fraction = counts / expert_idx.numel()
                return self.num_experts * (fraction * probs.mean(dim=0)).sum()
    ''',
}, lookalike=True, note="the same helper is called with dtype=torch.float32 on one batch's counts "
                        "(far below 2^24) and used once for a ratio")

# ---------------------------------------------------------------- 3-module-cast
case("44-metric-buffer-model-half", "3-module-cast", {
    "clf/__init__.py": '''
    ''',
    "clf/metrics.py": '''
        import torch
        import torch.nn as nn


        class RunningAccuracy(nn.Module):
            """Training accuracy since the last log, kept on the device."""

            def __init__(self):
                super().__init__()
                self.register_buffer("n_correct", torch.tensor(0.0))
                self.register_buffer("n_total", torch.tensor(0.0))

            @torch.no_grad()
            def update(self, logits, target):
                self.n_correct += (logits.argmax(dim=-1) == target).sum()
                self.n_total += target.shape[0]

            def compute(self):
                value = self.n_correct / self.n_total.clamp(min=1)
                self.n_correct.zero_()
                self.n_total.zero_()
                return value
    ''',
    "clf/model.py": '''
        import torch.nn as nn

        from .metrics import RunningAccuracy


        class Classifier(nn.Module):
            def __init__(self, backbone, num_classes):
                super().__init__()
                self.backbone = backbone
                self.head = nn.Linear(backbone.out_dim, num_classes)
                self.train_acc = RunningAccuracy()

            def forward(self, images, target=None):
                logits = self.head(self.backbone(images))
                if target is not None:
                    self.train_acc.update(logits, target)
                return logits
    ''',
    "clf/train.py": '''
        import torch
        import torch.nn.functional as F

        from .model import Classifier


        def train(backbone, loader, num_classes, steps_per_log=500):
            model = Classifier(backbone, num_classes).cuda().half()
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step, (images, target) in enumerate(loader):
                logits = model(images.cuda().half(), target.cuda())
                loss = F.cross_entropy(logits.float(), target.cuda())
                loss.backward()
                opt.step()
                opt.zero_grad()
                if step % steps_per_log == 0:
                    print(step, model.train_acc.compute().item())
    ''',
}, hazards=[
    hazard("clf/metrics.py", 'self.register_buffer("n_correct", torch.tensor(0.0))',
           "model.half() in train.py casts this float buffer to float16: 500 steps of 256 images "
           "pass 2,048 correct predictions and the count stops being exact (torchmetrics #1561)"),
    hazard("clf/metrics.py", 'self.register_buffer("n_total", torch.tensor(0.0))',
           "the sample total is cast to float16 by model.half(); it passes 2,048 within 8 steps"),
])

case("45-moe-buffer-float16module", "3-module-cast", {
    "gptmoe/__init__.py": '''
    ''',
    "gptmoe/moe_layer.py": '''
        import torch
        import torch.distributed as dist
        from megatron.core.transformer.module import MegatronModule


        class MoELayer(MegatronModule):
            def __init__(self, config, router, experts, num_local_experts):
                super().__init__(config)
                self.router = router
                self.experts = experts
                self.register_buffer("local_tokens_per_expert", torch.zeros(num_local_experts), persistent=False)
                self.register_buffer("expert_bias", torch.zeros(num_local_experts), persistent=False)

            def forward(self, hidden_states):
                probs, routing_map = self.router(hidden_states, self.expert_bias)
                self.local_tokens_per_expert += torch.count_nonzero(routing_map, dim=0)
                return self.experts(hidden_states, probs, routing_map)

            @torch.no_grad()
            def update_expert_bias(self, rate, group=None):
                load = self.local_tokens_per_expert.clone()
                dist.all_reduce(load, group=group)
                self.expert_bias += rate * torch.sign(load.mean() - load)
                self.local_tokens_per_expert.zero_()
    ''',
    "gptmoe/setup_model.py": '''
        from megatron.core.transformer.module import Float16Module

        from .gpt import build_gpt


        def model_provider(config):
            model = build_gpt(config)
            if config.bf16 or config.fp16:
                model = Float16Module(config, model)
            return model
    ''',
    "gptmoe/gpt.py": '''
        import torch.nn as nn

        from .moe_layer import MoELayer


        def build_gpt(config):
            layers = [MoELayer(config, config.make_router(), config.make_experts(), config.num_moe_experts)
                      for _ in range(config.num_layers)]
            return nn.Sequential(*layers)
    ''',
}, hazards=[hazard("gptmoe/moe_layer.py", ['self.register_buffer("local_tokens_per_expert"',
                                           "dist.all_reduce(load, group=group)"],
                   "Float16Module casts the float buffer to bf16; tokens per expert per step "
                   "(tens of thousands) then round, and the all-reduced load flips the sign of the "
                   "bias update (Megatron-LM PR #7081: 40,840 reduced as 41,216)")])

case("46-fsdp-buffer-dtype-running-stats", "3-module-cast", {
    "rl/__init__.py": '''
    ''',
    "rl/normalize.py": '''
        import torch
        import torch.nn as nn


        class RunningMeanStd(nn.Module):
            """Observation normaliser with a parallel (Chan et al.) variance update."""

            def __init__(self, shape, eps=1e-4):
                super().__init__()
                self.register_buffer("mean", torch.zeros(shape))
                self.register_buffer("var", torch.ones(shape))
                self.register_buffer("count", torch.tensor(eps))

            @torch.no_grad()
            def update(self, x):
                batch_mean = x.mean(dim=0)
                batch_var = x.var(dim=0, unbiased=False)
                batch_count = x.shape[0]
                delta = batch_mean - self.mean
                total = self.count + batch_count
                self.mean += delta * batch_count / total
                m2 = self.var * self.count + batch_var * batch_count + delta**2 * self.count * batch_count / total
                self.var.copy_(m2 / total)
                self.count += batch_count

            def forward(self, x):
                return (x - self.mean) / torch.sqrt(self.var + 1e-8)
    ''',
    "rl/policy.py": '''
        import torch
        import torch.nn as nn
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp import MixedPrecision

        from .normalize import RunningMeanStd


        class Policy(nn.Module):
            def __init__(self, obs_dim, act_dim, hidden=1024):
                super().__init__()
                self.obs_norm = RunningMeanStd(obs_dim)
                self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))

            def forward(self, obs):
                if self.training:
                    self.obs_norm.update(obs)
                return self.net(self.obs_norm(obs))


        def wrap_policy(obs_dim, act_dim):
            mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
            return FSDP(Policy(obs_dim, act_dim), mixed_precision=mp, device_id=torch.cuda.current_device())
    ''',
}, hazards=[hazard("rl/normalize.py", 'self.register_buffer("count", torch.tensor(eps))',
                   "FSDP MixedPrecision(buffer_dtype=torch.bfloat16) casts the sample-count buffer "
                   "to bf16: after 256 observations each batch's share is computed against a stuck count")])

case("47-rope-type-as-buffer-model-to-bf16", "3-module-cast", {
    "tinylm/__init__.py": '''
    ''',
    "tinylm/rotary.py": '''
        import torch
        import torch.nn as nn


        class Rotary(nn.Module):
            def __init__(self, head_dim, base=10000.0):
                super().__init__()
                inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
                self.register_buffer("inv_freq", inv_freq)

            def forward(self, seq_len):
                t = torch.arange(seq_len, device=self.inv_freq.device).type_as(self.inv_freq)
                freqs = torch.outer(t, self.inv_freq)
                return freqs.cos(), freqs.sin()
    ''',
    "tinylm/train.py": '''
        import torch

        from .model import TinyLM


        def build(cfg):
            model = TinyLM(cfg).cuda()
            model = model.to(torch.bfloat16)
            return model, torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    ''',
    "tinylm/model.py": '''
        import torch.nn as nn

        from .rotary import Rotary


        class TinyLM(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.embed = nn.Embedding(cfg.vocab, cfg.dim)
                self.rotary = Rotary(cfg.dim // cfg.heads)
                self.blocks = nn.ModuleList(cfg.block(cfg) for _ in range(cfg.layers))

            def forward(self, ids):
                cos, sin = self.rotary(ids.shape[1])
                h = self.embed(ids)
                for block in self.blocks:
                    h = block(h, cos, sin)
                return h
    ''',
}, hazards=[hazard("tinylm/rotary.py", ["t = torch.arange(seq_len, device=self.inv_freq.device).type_as(self.inv_freq)",
                                        "freqs = torch.outer(t, self.inv_freq)"],
                   "model.to(torch.bfloat16) casts inv_freq, and type_as makes the positions bf16: "
                   "positions above 256 alias (UNI-D2 #6, Megatron-LM #535)")])

case("48-int64-buffer-model-half", "3-module-cast", {
    "asr/__init__.py": '''
    ''',
    "asr/encoder.py": '''
        import torch
        import torch.nn as nn


        class Encoder(nn.Module):
            def __init__(self, dim, layers):
                super().__init__()
                self.layers = nn.ModuleList(nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(layers))
                self.register_buffer("frames_seen", torch.zeros((), dtype=torch.long), persistent=False)

            def forward(self, feats, pad_mask):
                if self.training:
                    self.frames_seen += (~pad_mask).sum()
                for layer in self.layers:
                    feats = layer(feats, src_key_padding_mask=pad_mask)
                return feats
    ''',
    "asr/train.py": '''
        from .encoder import Encoder


        def build(dim=512, layers=12):
            return Encoder(dim, layers).cuda().half()
    ''',
}, lookalike=True, note=".half() converts floating tensors only; the int64 frame counter stays int64")

case("49-eval-sample-count-buffer-fp32", "3-module-cast", {
    "eval_metric.py": '''
        import torch
        import torch.nn as nn


        class EpochTop1(nn.Module):
            """Top-1 accuracy over one pass of the 50,000-image validation set; reset every epoch."""

            def __init__(self):
                super().__init__()
                self.register_buffer("hits", torch.zeros(()))
                self.register_buffer("images", torch.zeros(()))

            def reset(self):
                self.hits.zero_()
                self.images.zero_()

            @torch.no_grad()
            def update(self, logits, target):
                self.hits += (logits.argmax(dim=1) == target).sum()
                self.images += target.shape[0]

            def compute(self):
                return (self.hits / self.images).item()
    ''',
}, lookalike=True, note="per-image sample counts in float32, reset every epoch over 50,000 images: "
                        "far below 2^24, and nothing in the project casts the module")

case("50-rope-fp32-positions-model-cast", "3-module-cast", {
    "tinylm2/__init__.py": '''
    ''',
    "tinylm2/rotary.py": '''
        import torch
        import torch.nn as nn


        class Rotary(nn.Module):
            def __init__(self, head_dim, base=10000.0):
                super().__init__()
                inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
                self.register_buffer("inv_freq", inv_freq, persistent=False)

            def forward(self, x, seq_len):
                t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
                freqs = torch.outer(t, self.inv_freq.float())
                return freqs.cos().to(x.dtype), freqs.sin().to(x.dtype)
    ''',
    "tinylm2/build.py": '''
        import torch

        from .rotary import Rotary


        def build_rotary(head_dim):
            return Rotary(head_dim).to(torch.bfloat16)
    ''',
}, lookalike=True, note="positions are made in float32 and inv_freq is brought back to float32 "
                        "before the product; only cos/sin are cast to the model dtype")

case("51-deepspeed-bf16-metric-buffer", "3-module-cast", {
    "dsrun/__init__.py": '''
    ''',
    "dsrun/model.py": '''
        import torch
        import torch.nn as nn


        class Retriever(nn.Module):
            def __init__(self, encoder):
                super().__init__()
                self.encoder = encoder
                self.register_buffer("in_batch_hits", torch.zeros(()), persistent=False)
                self.register_buffer("queries", torch.zeros(()), persistent=False)

            def forward(self, q_ids, d_ids):
                q = self.encoder(q_ids)
                d = self.encoder(d_ids)
                scores = q @ d.T
                target = torch.arange(q.shape[0], device=q.device)
                with torch.no_grad():
                    self.in_batch_hits += (scores.argmax(dim=1) == target).sum()
                    self.queries += q.shape[0]
                return nn.functional.cross_entropy(scores.float(), target)
    ''',
    "dsrun/launch.py": '''
        import deepspeed

        from .model import Retriever

        DS_CONFIG = {
            "train_micro_batch_size_per_gpu": 512,
            "bf16": {"enabled": True},
            "zero_optimization": {"stage": 2},
        }


        def launch(encoder, params):
            engine, optimizer, _, _ = deepspeed.initialize(
                model=Retriever(encoder), model_parameters=params, config=DS_CONFIG
            )
            return engine, optimizer
    ''',
}, hazards=[
    hazard("dsrun/model.py", 'self.register_buffer("in_batch_hits"',
           "DeepSpeed with bf16 enabled casts the module, float buffers included, to bf16; the hit "
           "count stops being exact at 256 (torchmetrics #2314)"),
    hazard("dsrun/model.py", 'self.register_buffer("queries"',
           "the query total (512 per step) is bf16 after deepspeed.initialize: wrong from the first step"),
])

case("52-from-pretrained-torch-dtype", "3-module-cast", {
    "curriculum_lm/__init__.py": '''
    ''',
    "curriculum_lm/modeling.py": '''
        import torch
        import torch.nn as nn
        from transformers import PreTrainedModel


        class CurriculumLM(PreTrainedModel):
            def __init__(self, config):
                super().__init__(config)
                self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
                self.backbone = nn.TransformerEncoder(
                    nn.TransformerEncoderLayer(config.hidden_size, config.num_heads, batch_first=True),
                    config.num_layers,
                )
                self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
                self.register_buffer("tokens_seen", torch.zeros(()), persistent=False)

            def dropout_schedule(self):
                return min(0.1, 0.1 * self.tokens_seen.item() / self.config.warmup_tokens)

            def forward(self, input_ids, attention_mask):
                if self.training:
                    self.tokens_seen += torch.count_nonzero(attention_mask)
                h = self.backbone(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)
                return self.lm_head(nn.functional.dropout(h, self.dropout_schedule(), self.training))
    ''',
    "curriculum_lm/finetune.py": '''
        import torch

        from .modeling import CurriculumLM


        def load(path):
            return CurriculumLM.from_pretrained(path, torch_dtype=torch.bfloat16).cuda()
    ''',
}, hazards=[hazard("curriculum_lm/modeling.py", 'self.register_buffer("tokens_seen", torch.zeros(())',
                   "a float buffer counting tokens: float32 past 2^24 already, and bf16 once loaded "
                   "with torch_dtype=torch.bfloat16")])

# ---------------------------------------------------------------- 3-autocast-positions
case("53-rope-matmul-under-autocast", "3-autocast-positions", {
    "llm/__init__.py": '''
    ''',
    "llm/rope.py": '''
        import torch
        import torch.nn as nn


        class RopeCache(nn.Module):
            def __init__(self, head_dim, base=500000.0):
                super().__init__()
                exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
                self.register_buffer("inv_freq", 1.0 / base**exponents, persistent=False)

            @torch.no_grad()
            def forward(self, q, positions):
                freq = self.inv_freq.float()[None, :, None].expand(positions.size(0), -1, 1)
                pos = positions.float()[:, None, :]
                angles = torch.matmul(freq, pos).transpose(1, 2)
                angles = torch.cat([angles, angles], dim=-1)
                return angles.cos().to(q.dtype), angles.sin().to(q.dtype)
    ''',
    "llm/step.py": '''
        import torch


        def train_step(model, batch, optimizer, scaler=None):
            positions = torch.arange(batch["input_ids"].shape[1], device="cuda")[None].expand_as(batch["input_ids"])
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                out = model(batch["input_ids"], positions=positions, labels=batch["labels"])
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return out.loss.detach()
    ''',
}, hazards=[hazard("llm/rope.py", ["pos = positions.float()[:, None, :]",
                                   "angles = torch.matmul(freq, pos).transpose(1, 2)"],
                   "the forward runs inside torch.autocast(dtype=torch.bfloat16) (step.py): the matmul "
                   "casts the float32 positions to bf16, so 4095 and 4097 both become 4096 "
                   "(transformers PR #29285)")])

case("54-image-positions-matmul-autocast", "3-autocast-positions", {
    "mrope.py": '''
        import torch


        def image_rotary(grid_h, grid_w, dim, offset=65536, theta=10000.0, device="cuda"):
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                ids = torch.arange(grid_h * grid_w, device=device, dtype=torch.float32) + offset
                inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim)
                freqs = ids[:, None] @ inv_freq[None, :]
                return torch.polar(torch.ones_like(freqs), freqs)
    ''',
}, hazards=[hazard("mrope.py", ["ids = torch.arange(grid_h * grid_w", "freqs = ids[:, None] @ inv_freq[None, :]"],
                   "image position ids start at 65,536; inside bf16 autocast the matmul rounds them to "
                   "steps of 512, so every image token gets the same phase (diffusers #13920)")])

case("55-coords-linear-under-autocast", "3-autocast-positions", {
    "coord_embed.py": '''
        import torch
        import torch.nn as nn


        class CoordEmbedding(nn.Module):
            """Embeds absolute pixel coordinates (up to the image size) with a learned projection."""

            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(2, dim)

            def forward(self, height, width, device):
                ys, xs = torch.meshgrid(
                    torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij"
                )
                coords = torch.stack([ys, xs], dim=-1).flatten(0, 1).float()
                return torch.sin(self.proj(coords))


        class Detector(nn.Module):
            def __init__(self, backbone, dim):
                super().__init__()
                self.backbone = backbone
                self.coord = CoordEmbedding(dim)

            def forward(self, images):
                feats = self.backbone(images)
                return feats + self.coord(images.shape[-2], images.shape[-1], images.device)


        def predict(model, images):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return model(images)
    ''',
}, hazards=[hazard("coord_embed.py", ["coords = torch.stack([ys, xs], dim=-1).flatten(0, 1).float()",
                                      "return torch.sin(self.proj(coords))"],
                   "pixel coordinates up to ~1,000 go through nn.Linear under bf16 autocast and are cast "
                   "to bf16 (spacing 4-8 there)")])

case("56-rope-autocast-disabled", "3-autocast-positions", {
    "llm2/__init__.py": '''
    ''',
    "llm2/rope.py": '''
        import torch
        import torch.nn as nn


        class RopeCache(nn.Module):
            def __init__(self, head_dim, base=500000.0):
                super().__init__()
                exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
                self.register_buffer("inv_freq", 1.0 / base**exponents, persistent=False)

            @torch.no_grad()
            def forward(self, q, positions):
                device_type = q.device.type if q.device.type != "mps" else "cpu"
                with torch.autocast(device_type=device_type, enabled=False):
                    freq = self.inv_freq.float()[None, :, None].expand(positions.size(0), -1, 1)
                    pos = positions.float()[:, None, :]
                    angles = torch.matmul(freq, pos).transpose(1, 2)
                    angles = torch.cat([angles, angles], dim=-1)
                return angles.cos().to(q.dtype), angles.sin().to(q.dtype)
    ''',
    "llm2/step.py": '''
        import torch


        def train_step(model, batch, optimizer):
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                out = model(batch["input_ids"], positions=batch["positions"], labels=batch["labels"])
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    ''',
}, lookalike=True, note="the position matmul runs with autocast disabled, in float32 (the "
                        "transformers fix); the outer bf16 autocast does not reach it")

case("57-positions-matmul-no-autocast", "3-autocast-positions", {
    "infer_fp32.py": '''
        import torch


        def sinusoid_table(seq_len, dim, device="cpu"):
            pos = torch.arange(seq_len, device=device, dtype=torch.float32)
            inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
            phase = pos[:, None] @ inv[None, :]
            return torch.cat([phase.sin(), phase.cos()], dim=-1)


        @torch.inference_mode()
        def embed_documents(model, batches):
            model = model.float().eval()
            out = []
            for ids in batches:
                table = sinusoid_table(ids.shape[1], model.dim)
                out.append(model(ids, table))
            return out
    ''',
}, lookalike=True, note="positions in float32 fed to a matmul with no autocast anywhere: float32 is "
                        "exact for positions far beyond any sequence length")

case("58-rope-outer-einsum-under-autocast", "3-autocast-positions", {
    "vit_rope.py": '''
        import torch
        import torch.nn as nn


        class AxialRope(nn.Module):
            def __init__(self, dim, theta=10000.0):
                super().__init__()
                self.register_buffer(
                    "inv_freq", 1.0 / theta ** (torch.arange(0, dim, 4, dtype=torch.float32) / dim), persistent=False
                )

            def forward(self, h, w, device):
                ys = torch.arange(h, device=device, dtype=torch.float32)
                xs = torch.arange(w, device=device, dtype=torch.float32)
                fy = torch.einsum("i,j->ij", ys, self.inv_freq)
                fx = xs[:, None] * self.inv_freq[None, :]
                grid = torch.cat([fy[:, None, :].expand(h, w, -1), fx[None, :, :].expand(h, w, -1)], dim=-1)
                return grid.flatten(0, 1)


        def encode(model, images):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return model(images)
    ''',
}, lookalike=True, note="an outer-product einsum (no contracted index) and an elementwise product are "
                        "not autocast ops: both stay float32 under bf16 autocast (checked on CPU "
                        "autocast, torch 2.13: einsum('i,j->ij') and t[:,None]*f give float32, while "
                        "matmul gives bf16)")

# ---------------------------------------------------------------- 3-default-dtype
case("59-default-bf16-optimizer-step", "3-default-dtype", {
    "bf16run/__init__.py": '''
    ''',
    "bf16run/optim.py": '''
        import torch


        class Lion(torch.optim.Optimizer):
            def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, warmup=1000):
                super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay, warmup=warmup))

            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    beta1, beta2 = group["betas"]
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if not state:
                            state["step"] = torch.tensor(0.0)
                            state["exp_avg"] = torch.zeros_like(p)
                        state["step"] += 1
                        lr = group["lr"] * min(1.0, state["step"].item() / group["warmup"])
                        update = state["exp_avg"].mul(beta1).add(p.grad, alpha=1 - beta1).sign_()
                        p.mul_(1 - lr * group["weight_decay"]).add_(update, alpha=-lr)
                        state["exp_avg"].mul_(beta2).add_(p.grad, alpha=1 - beta2)
    ''',
    "bf16run/main.py": '''
        import torch

        from .optim import Lion


        def main(build_model, loader):
            torch.set_default_dtype(torch.bfloat16)
            model = build_model().cuda()
            opt = Lion(model.parameters(), lr=3e-4)
            for batch in loader:
                loss = model(**batch).loss
                loss.backward()
                opt.step()
                opt.zero_grad()
    ''',
}, hazards=[hazard("bf16run/optim.py", 'state["step"] = torch.tensor(0.0)',
                   "main.py sets the default dtype to bfloat16 before the optimizer runs, so "
                   "torch.tensor(0.0) is bf16 and the step stops at 256: warmup never ends "
                   "(pytorch/ao PR #4915)")])

case("60-get-default-dtype-fp16-counter", "3-default-dtype", {
    "fp16_sim.py": '''
        import torch


        class UpdateCounter:
            def __init__(self, device="cuda"):
                self.count = torch.zeros((), dtype=torch.get_default_dtype(), device=device)

            def tick(self):
                self.count += 1

            def decay(self, base=0.999):
                n = self.count
                return min(base, (1 + n.item()) / (10 + n.item()))


        def main(model, loader):
            torch.set_default_dtype(torch.float16)
            counter = UpdateCounter()
            ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
            for batch in loader:
                model(batch).backward()
                counter.tick()
                d = counter.decay()
                for k, v in model.state_dict().items():
                    ema[k].mul_(d).add_(v.detach(), alpha=1 - d)
    ''',
}, hazards=[hazard("fp16_sim.py", "self.count = torch.zeros((), dtype=torch.get_default_dtype(), device=device)",
                   "the counter takes torch.get_default_dtype(), which main() sets to float16: "
                   "`+= 1` stops at 2,048 and the EMA decay freezes")])

case("61-default-float64-counts", "3-default-dtype", {
    "md_sim.py": '''
        import torch

        torch.set_default_dtype(torch.float64)


        def neighbour_statistics(frames, cutoff):
            """Pairs within the cutoff over a long molecular-dynamics trajectory (double precision)."""
            pairs_within = torch.zeros(())
            pairs_total = torch.zeros(())
            for pos in frames:
                d = torch.cdist(pos, pos)
                close = (d < cutoff) & (d > 0)
                pairs_within += close.sum()
                pairs_total += d.numel() - d.shape[0]
            return pairs_within / pairs_total
    ''',
}, lookalike=True, note="the module sets the default dtype to float64 before anything runs: "
                        "torch.zeros(()) is float64, exact to 2^53")

case("62-default-bf16-step-pinned-fp32", "3-default-dtype", {
    "bf16run2/__init__.py": '''
    ''',
    "bf16run2/optim.py": '''
        import torch


        class Lion(torch.optim.Optimizer):
            def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), warmup=1000):
                super().__init__(params, dict(lr=lr, betas=betas, warmup=warmup))

            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    beta1, beta2 = group["betas"]
                    for p in group["params"]:
                        if p.grad is None:
                            continue
                        state = self.state[p]
                        if not state:
                            state["step"] = torch.tensor(0.0, dtype=torch.float32)
                            state["exp_avg"] = torch.zeros_like(p)
                        state["step"] += 1
                        lr = group["lr"] * min(1.0, state["step"].item() / group["warmup"])
                        update = state["exp_avg"].mul(beta1).add(p.grad, alpha=1 - beta1).sign_()
                        p.add_(update, alpha=-lr)
                        state["exp_avg"].mul_(beta2).add_(p.grad, alpha=1 - beta2)
    ''',
    "bf16run2/main.py": '''
        import torch

        from .optim import Lion


        def main(build_model, loader):
            torch.set_default_dtype(torch.bfloat16)
            model = build_model().cuda()
            opt = Lion(model.parameters())
            for batch in loader:
                model(**batch).loss.backward()
                opt.step()
                opt.zero_grad()
    ''',
}, lookalike=True, note="the default dtype is bf16 but the step counter is pinned to float32 (the "
                        "pytorch/ao fix); a float32 step counter is exact for any run length")

case("119-float16module-int64-buffer", "3-module-cast", {
    "gptmoe2/__init__.py": '''
    ''',
    "gptmoe2/moe_layer.py": '''
        import torch
        import torch.distributed as dist
        from megatron.core.transformer.module import MegatronModule


        class MoELayer(MegatronModule):
            def __init__(self, config, router, experts, num_local_experts):
                super().__init__(config)
                self.router = router
                self.experts = experts
                self.register_buffer(
                    "local_tokens_per_expert", torch.zeros(num_local_experts, dtype=torch.int64), persistent=False
                )
                self.register_buffer("expert_bias", torch.zeros(num_local_experts, dtype=torch.float32), persistent=False)

            def forward(self, hidden_states):
                probs, routing_map = self.router(hidden_states, self.expert_bias)
                self.local_tokens_per_expert += torch.count_nonzero(routing_map, dim=0)
                return self.experts(hidden_states, probs, routing_map)

            @torch.no_grad()
            def update_expert_bias(self, rate, group=None):
                load = self.local_tokens_per_expert.clone()
                dist.all_reduce(load, group=group)
                self.expert_bias += rate * torch.sign(load.float().mean() - load.float())
                self.local_tokens_per_expert.zero_()
    ''',
    "gptmoe2/setup_model.py": '''
        from megatron.core.transformer.module import Float16Module

        from .moe_layer import MoELayer


        def model_provider(config):
            layers = [MoELayer(config, config.make_router(), config.make_experts(), config.num_moe_experts)
                      for _ in range(config.num_layers)]
            model = config.wrap(layers)
            if config.bf16:
                model = Float16Module(config, model)
            return model
    ''',
}, lookalike=True, note="Float16Module casts floating tensors only; the tokens-per-expert buffer is "
                        "int64 and all-reduced as int64 (the Megatron fix)")

case("120-step-buffer-model-bfloat16", "3-module-cast", {
    "diffusion/__init__.py": '''
    ''',
    "diffusion/ema_teacher.py": '''
        import torch
        import torch.nn as nn


        class ConsistencyTeacher(nn.Module):
            """Teacher whose target-noise schedule advances once per training call."""

            def __init__(self, net, ramp_steps=10000):
                super().__init__()
                self.net = net
                self.ramp_steps = ramp_steps
                self.register_buffer("calls", torch.zeros(()))

            def discretisation(self, s0=2, s1=150):
                k = torch.clamp(self.calls.float() / self.ramp_steps, max=1.0)
                return int(s0 + (s1 - s0) * k.item())

            def forward(self, x, sigma):
                if self.training:
                    self.calls += 1
                return self.net(x, sigma)
    ''',
    "diffusion/train.py": '''
        import torch

        from .ema_teacher import ConsistencyTeacher


        def build_teacher(net):
            teacher = ConsistencyTeacher(net).cuda()
            teacher.bfloat16()
            return teacher
    ''',
}, hazards=[hazard("diffusion/ema_teacher.py", 'self.register_buffer("calls", torch.zeros(()))',
                   "a float32 `+= 1` counter would be exact, but teacher.bfloat16() in train.py casts the "
                   "buffer to bf16: it stops at 256 and the 10,000-step ramp never passes 2.6%")])
