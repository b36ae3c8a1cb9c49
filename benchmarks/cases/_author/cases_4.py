"""Cause 4: Python numbers wrapped into float tensors. Cause 5: casts before collectives."""
from registry import case, hazard

# ---------------------------------------------------------------- 4-wrap-python-number
case("63-tensor-of-loss-and-count", "4-wrap-python-number", {
    "dist_eval.py": '''
        import torch
        import torch.distributed as dist


        @torch.no_grad()
        def distributed_perplexity(model, loader, device):
            loss_sum = 0.0
            n_tokens = 0
            for batch in loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                out = model(**batch)
                n = int((batch["labels"] != -100).sum())
                loss_sum += out.loss.item() * n
                n_tokens += n
            stats = torch.tensor([loss_sum, n_tokens], device=device)
            dist.all_reduce(stats)
            return torch.exp(stats[0] / stats[1]).item()
    ''',
}, hazards=[hazard("dist_eval.py", ["stats = torch.tensor([loss_sum, n_tokens], device=device)",
                                    "dist.all_reduce(stats)"],
                   "the exact Python-int token total is packed with a float into a float32 tensor and "
                   "summed over ranks; totals past 2^24 round (Megatron's [loss, tokens] pattern)")])

case("64-accelerator-floattensor-count", "4-wrap-python-number", {
    "ds_tokens.py": '''
        import torch
        import torch.distributed as dist
        from deepspeed.accelerator import get_accelerator


        def global_batch_tokens(attention_mask, group=None):
            local = get_accelerator().FloatTensor([float(torch.count_nonzero(attention_mask).item())])
            dist.all_reduce(local, group=group)
            return local.item()
    ''',
}, hazards=[hazard("ds_tokens.py", ["local = get_accelerator().FloatTensor(", "dist.all_reduce(local, group=group)"],
                   "a token count is wrapped into a float32 tensor and summed over the data-parallel "
                   "group: 1,024 ranks x 32k tokens is 33.5M, past 2^24")])

case("65-legacy-floattensor-accuracy", "4-wrap-python-number", {
    "legacy_eval.py": '''
        import torch
        import torch.distributed as dist


        def validate(model, loader):
            model.eval()
            num_correct = 0
            num_pixels = 0
            with torch.no_grad():
                for images, masks in loader:
                    pred = model(images.cuda()).argmax(1)
                    valid = masks.cuda() != 255
                    num_correct += int((pred[valid] == masks.cuda()[valid]).sum())
                    num_pixels += int(valid.sum())
            totals = torch.cuda.FloatTensor([num_correct, num_pixels])
            dist.all_reduce(totals)
            return (totals[0] / totals[1]).item()
    ''',
}, hazards=[hazard("legacy_eval.py", ["totals = torch.cuda.FloatTensor([num_correct, num_pixels])",
                                      "dist.all_reduce(totals)"],
                   "exact pixel counts (Python ints, past 2^24 on any segmentation val set) are wrapped "
                   "into a legacy float32 tensor and all-reduced")])

case("66-tensor-of-int-count", "4-wrap-python-number", {
    "dist_eval.py": '''
        import torch
        import torch.distributed as dist


        @torch.no_grad()
        def distributed_token_count(loader, device):
            n_tokens = 0
            for batch in loader:
                n_tokens += int((batch["labels"] != -100).sum())
            total = torch.tensor(n_tokens, device=device)
            dist.all_reduce(total)
            return total.item()
    ''',
}, lookalike=True, note="torch.tensor of a Python int is int64, and an int64 SUM all-reduce is exact")

case("67-tensor-of-loss-count-separate", "4-wrap-python-number", {
    "dist_eval.py": '''
        import torch
        import torch.distributed as dist


        @torch.no_grad()
        def distributed_loss(model, loader, device):
            loss_sum = 0.0
            n_tokens = 0
            for batch in loader:
                out = model(**batch)
                n = int((batch["labels"] != -100).sum())
                loss_sum += out.loss.item() * n
                n_tokens += n
            loss_t = torch.tensor([loss_sum], device=device)
            count_t = torch.tensor([n_tokens], dtype=torch.long, device=device)
            dist.all_reduce(loss_t)
            dist.all_reduce(count_t)
            return (loss_t / count_t).item()
    ''',
}, lookalike=True, note="only the loss is wrapped in float32; the count travels as int64")

# ---------------------------------------------------------------- 4-builtins-sum
case("68-builtin-sum-counts-float-total", "4-builtins-sum", {
    "ga_trainer.py": '''
        import torch


        class GradAccumTrainer:
            def __init__(self, model, optimizer, device="cuda"):
                self.model = model
                self.optimizer = optimizer
                self.tokens_seen = torch.zeros(1, device=device)

            def step(self, micro_batches):
                num_items = sum((mb["labels"] != -100).sum() for mb in micro_batches)
                for mb in micro_batches:
                    loss = self.model(**mb, reduction="sum").loss / num_items
                    loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.tokens_seen += num_items
    ''',
}, hazards=[hazard("ga_trainer.py", "self.tokens_seen = torch.zeros(1, device=device)",
                   "builtins.sum of int64 counts is a count; the running total of it is float32")])

case("69-builtin-sum-float-start-allreduce", "4-builtins-sum", {
    "global_norm.py": '''
        import torch
        import torch.distributed as dist


        def global_token_count(loss_masks, group=None):
            n = sum((torch.count_nonzero(m) for m in loss_masks), 0.0)
            dist.all_reduce(n, group=group)
            return n
    ''',
}, hazards=[hazard("global_norm.py", ["n = sum((torch.count_nonzero(m) for m in loss_masks), 0.0)",
                                      "dist.all_reduce(n, group=group)"],
                   "the 0.0 start turns the int64 mask sums into a float32 tensor, then summed over ranks")])

case("70-builtin-sum-int64-gather", "4-builtins-sum", {
    "ga_accelerate.py": '''
        import torch


        def num_items_in_batch(accelerator, batch_samples):
            local = sum([(b["labels"].ne(-100)).sum() for b in batch_samples])
            return accelerator.gather(local).sum()


        def train_step(accelerator, model, optimizer, batch_samples):
            total = num_items_in_batch(accelerator, batch_samples)
            for b in batch_samples:
                with accelerator.accumulate(model):
                    out = model(**b)
                    loss = out.loss_sum * accelerator.num_processes / total
                    accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
    ''',
}, lookalike=True, note="builtins.sum of int64 counts stays int64 and is gathered as int64 (the "
                        "transformers gradient-accumulation fix)")

# ---------------------------------------------------------------- 4-float-of-count
case("71-float-count-tensor-allreduce", "4-float-of-count", {
    "token_norm.py": '''
        import torch
        import torch.distributed as dist


        def normalized_loss(loss_sum, batch, device, pad_id=0):
            n_local = float((batch["input_ids"] != pad_id).sum())
            n_global = torch.tensor(n_local, device=device)
            dist.all_reduce(n_global)
            return loss_sum * dist.get_world_size() / n_global
    ''',
}, hazards=[hazard("token_norm.py", ['n_local = float((batch["input_ids"] != pad_id).sum())',
                                     "n_global = torch.tensor(n_local, device=device)",
                                     "dist.all_reduce(n_global)"],
                   "float() of a count, wrapped into a float32 tensor and summed over ranks")])

case("72-float-count-added-to-tensor", "4-float-of-count", {
    "epoch_stats.py": '''
        import torch


        class EpochStats:
            def __init__(self, device):
                self.pixels = torch.zeros((), device=device)
                self.loss = torch.zeros((), device=device)

            def update(self, loss, target, ignore_index=255):
                n = float((target != ignore_index).sum())
                self.pixels += n
                self.loss += loss.detach() * n

            def mean_loss(self):
                return (self.loss / self.pixels).item()
    ''',
}, hazards=[hazard("epoch_stats.py", "self.pixels = torch.zeros((), device=device)",
                   "float(count) is still a pixel count; adding it to a float32 tensor over an epoch "
                   "passes 2^24")])

case("73-float-count-only-logged", "4-float-of-count", {
    "logging_step.py": '''
        import torch


        def log_step(logger, step, loss, batch):
            tokens_in_step = (batch["labels"] != -100).sum()
            logger.log(
                {
                    "train/loss": loss.item(),
                    "train/tokens_in_step": float(tokens_in_step),
                },
                step=step,
            )
    ''',
}, lookalike=True, note="float() of one step's count is only logged; nothing accumulates it")

case("74-python-float-accumulator", "4-float-of-count", {
    "eval_py_float.py": '''
        import torch


        @torch.no_grad()
        def evaluate(model, loader):
            total_tokens = 0.0
            total_loss = 0.0
            for batch in loader:
                out = model(**batch)
                n = float((batch["labels"] != -100).sum())
                total_tokens += n
                total_loss += out.loss.item() * n
            return total_loss / max(total_tokens, 1.0)
    ''',
}, lookalike=True, note="a Python float accumulator is float64, exact to 2^53")

# ---------------------------------------------------------------- 5-cast-before-collective
case("75-float-cast-then-all-reduce", "5-cast-before-collective", {
    "global_loss.py": '''
        import torch.distributed as dist


        def global_mean_loss(per_token_loss, labels, group=None):
            mask = labels != -100
            loss_sum = (per_token_loss * mask).sum()
            num_tokens = mask.sum().float()
            dist.all_reduce(loss_sum, group=group)
            dist.all_reduce(num_tokens, group=group)
            return loss_sum / num_tokens
    ''',
}, hazards=[hazard("global_loss.py", ["num_tokens = mask.sum().float()", "dist.all_reduce(num_tokens, group=group)"],
                   "each rank's count is small, but the SUM over the data-parallel group of a float32 "
                   "count passes 2^24 on a large job")])

case("76-to-float32-dp-helper", "5-cast-before-collective", {
    "dp_utils.py": '''
        import torch
        import torch.distributed as dist


        class DataParallelHelper:
            def __init__(self, group=None):
                self.group = group
                self.world = dist.get_world_size(group)

            def sum_across(self, t):
                dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)
                return t

            def tokens_in_global_batch(self, attention_mask):
                local = torch.count_nonzero(attention_mask).to(torch.float32)
                return self.sum_across(local)
    ''',
}, hazards=[hazard("dp_utils.py", ["local = torch.count_nonzero(attention_mask).to(torch.float32)",
                                   "dist.all_reduce(t, op=dist.ReduceOp.SUM, group=self.group)",
                                   "return self.sum_across(local)"],
                   "a count made float32 is handed to a method that all-reduces it with SUM")])

case("77-int64-all-reduce-then-divide", "5-cast-before-collective", {
    "global_loss.py": '''
        import torch.distributed as dist


        def global_mean_loss(per_token_loss, labels, group=None):
            mask = labels != -100
            loss_sum = (per_token_loss * mask).sum()
            num_tokens = mask.sum()
            dist.all_reduce(loss_sum, group=group)
            dist.all_reduce(num_tokens, group=group)
            return loss_sum / num_tokens.float()
    ''',
}, lookalike=True, note="the count is all-reduced as int64 and made float only for the division")

case("78-float-loss-all-reduce-avg", "5-cast-before-collective", {
    "log_loss.py": '''
        import torch
        import torch.distributed as dist


        def averaged_for_logging(loss):
            value = loss.detach().float().clone()
            dist.all_reduce(value, op=dist.ReduceOp.AVG)
            return value.item()
    ''',
}, lookalike=True, note="a float loss averaged across ranks: not a count")

# ---------------------------------------------------------------- 5-other-collectives
case("79-deepspeed-comm-float-count", "5-other-collectives", {
    "ds_loss.py": '''
        import deepspeed.comm as dist


        def token_mean_loss(loss_sum, labels):
            n = (labels != -100).sum().float()
            dist.all_reduce(n)
            dist.all_reduce(loss_sum)
            return loss_sum / n
    ''',
}, hazards=[hazard("ds_loss.py", ["n = (labels != -100).sum().float()", "dist.all_reduce(n)"],
                   "deepspeed.comm.all_reduce sums a float32 count over all ranks")])

case("80-functional-collectives-float-count", "5-other-collectives", {
    "tp_loss.py": '''
        import torch
        import torch.distributed._functional_collectives as funcol


        def global_tokens(loss_mask, mesh_group):
            local = (loss_mask != 0).sum().float()
            return funcol.all_reduce(local, "sum", mesh_group)
    ''',
}, hazards=[hazard("tp_loss.py", ["local = (loss_mask != 0).sum().float()", 'return funcol.all_reduce(local, "sum", mesh_group)'],
                   "a functional all_reduce with 'sum' of a float32 count")])

case("81-accelerate-reduce-float-count", "5-other-collectives", {
    "acc_train.py": '''
        import torch


        def train_step(accelerator, model, batch, optimizer):
            out = model(**batch)
            num_tokens = (batch["labels"] != -100).sum()
            global_tokens = accelerator.reduce(num_tokens.float(), reduction="sum")
            loss = out.loss_sum * accelerator.num_processes / global_tokens
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            return global_tokens
    ''',
}, hazards=[hazard("acc_train.py", 'global_tokens = accelerator.reduce(num_tokens.float(), reduction="sum")',
                   "accelerate's reduce(sum) of a token count made float32")])

case("82-lightning-strategy-reduce-float", "5-other-collectives", {
    "lit_module.py": '''
        import lightning as L
        import torch


        class LitTagger(L.LightningModule):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def validation_step(self, batch, batch_idx):
                logits = self.model(batch["input_ids"])
                mask = batch["labels"] != -100
                correct = ((logits.argmax(-1) == batch["labels"]) & mask).sum().float()
                seen = mask.sum().float()
                correct = self.trainer.strategy.reduce(correct, reduce_op="sum")
                seen = self.trainer.strategy.reduce(seen, reduce_op="sum")
                self.log("val_token_acc", correct / seen)
    ''',
}, hazards=[
    hazard("lit_module.py", ["correct = ((logits.argmax(-1)", 'correct = self.trainer.strategy.reduce(correct, reduce_op="sum")'],
           "Lightning's strategy.reduce(sum) of a float32 count"),
    hazard("lit_module.py", ["seen = mask.sum().float()", 'seen = self.trainer.strategy.reduce(seen, reduce_op="sum")'],
           "the token count, float32, summed over ranks by strategy.reduce"),
])

case("83-deepspeed-comm-int64", "5-other-collectives", {
    "ds_loss.py": '''
        import deepspeed.comm as dist


        def token_mean_loss(loss_sum, labels):
            n = (labels != -100).sum()
            dist.all_reduce(n)
            dist.all_reduce(loss_sum)
            return loss_sum / n
    ''',
}, lookalike=True, note="the count crosses deepspeed.comm as int64")

case("84-functional-collectives-float-loss", "5-other-collectives", {
    "tp_loss.py": '''
        import torch
        import torch.distributed._functional_collectives as funcol


        def global_loss(loss_sum, mesh_group):
            return funcol.all_reduce(loss_sum.float(), "sum", mesh_group)
    ''',
}, lookalike=True, note="a float loss sum through a functional collective")

case("85-lightning-log-sync-ratio", "5-other-collectives", {
    "lit_module.py": '''
        import lightning as L
        import torch


        class LitClassifier(L.LightningModule):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def validation_step(self, batch, batch_idx):
                images, target = batch
                logits = self.model(images)
                acc = (logits.argmax(-1) == target).float().mean()
                self.log("val_acc", acc, sync_dist=True)
                self.log("val_loss", torch.nn.functional.cross_entropy(logits, target), sync_dist=True)
    ''',
}, lookalike=True, note="a per-batch ratio is synced for logging: not a count")
