"""Cause 1: counts cross function and module boundaries."""
from registry import case, hazard

# ---------------------------------------------------------------- 1-helper-return
case("01-helper-nonpad-eval", "1-helper-return", {
    "evaluate.py": '''
        import torch
        import torch.nn.functional as F

        IGNORE_INDEX = -100


        def count_supervised(labels, ignore_index=IGNORE_INDEX):
            """Number of label positions that take part in the loss."""
            return (labels != ignore_index).sum()


        class Evaluator:
            def __init__(self, model, loader, device="cuda"):
                self.model = model
                self.loader = loader
                self.device = device

            @torch.no_grad()
            def run(self):
                self.model.eval()
                loss_total = torch.zeros((), device=self.device)
                tokens_total = torch.zeros((), device=self.device)
                for batch in self.loader:
                    input_ids = batch["input_ids"].to(self.device)
                    labels = batch["labels"].to(self.device)
                    logits = self.model(input_ids)
                    loss = F.cross_entropy(
                        logits.flatten(0, 1), labels.flatten(),
                        ignore_index=IGNORE_INDEX, reduction="sum",
                    )
                    loss_total += loss
                    tokens_total += count_supervised(labels)
                self.model.train()
                return (loss_total / tokens_total).item()
    ''',
}, hazards=[hazard("evaluate.py", "tokens_total = torch.zeros((), device=self.device)",
                   "token counts returned by count_supervised() are summed over the whole eval set "
                   "in a float32 tensor; an eval set past 16.7M target tokens rounds")])

case("02-helper-nonpad-int64", "1-helper-return", {
    "evaluate.py": '''
        import torch
        import torch.nn.functional as F


        def count_supervised(labels, ignore_index=-100):
            return (labels != ignore_index).sum()


        @torch.no_grad()
        def evaluate(model, loader, device):
            model.eval()
            loss_total = torch.zeros((), device=device)
            tokens_total = torch.zeros((), dtype=torch.long, device=device)
            for input_ids, labels in loader:
                input_ids, labels = input_ids.to(device), labels.to(device)
                logits = model(input_ids)
                loss_total += F.cross_entropy(
                    logits.view(-1, logits.size(-1)), labels.view(-1), reduction="sum"
                )
                tokens_total += count_supervised(labels)
            model.train()
            return loss_total.item() / max(tokens_total.item(), 1)
    ''',
}, lookalike=True, note="the token total is int64; only the loss (a float value) is summed in float32")

case("03-helper-returns-accuracy", "1-helper-return", {
    "metrics_loop.py": '''
        import torch


        def batch_accuracy(logits, target):
            """Fraction of correct predictions in one batch."""
            return (logits.argmax(dim=-1) == target).float().mean()


        class AccuracyTracker:
            def __init__(self, device):
                self.acc_sum = torch.zeros((), device=device)
                self.batches = 0

            def update(self, logits, target):
                self.acc_sum += batch_accuracy(logits, target)
                self.batches += 1

            def compute(self):
                return self.acc_sum / max(self.batches, 1)
    ''',
}, lookalike=True, note="the helper returns a per-batch mean in [0, 1]; the float32 sum of means is "
                        "not an integer count, and the batch counter is a Python int")

# ---------------------------------------------------------------- 1-tuple-return
case("04-tuple-loss-and-tokens", "1-tuple-return", {
    "train_lm.py": '''
        import torch
        import torch.nn.functional as F


        def masked_lm_loss(logits, labels, ignore_index=-100):
            keep = labels.ne(ignore_index)
            loss = F.cross_entropy(logits[keep], labels[keep], reduction="sum")
            return loss, keep.sum()


        class Trainer:
            def __init__(self, model, optimizer, device):
                self.model = model
                self.optimizer = optimizer
                self.device = device
                self.tokens_trained = torch.zeros(1, device=device)

            def train_step(self, batch):
                logits = self.model(batch["input_ids"].to(self.device))
                loss_sum, n_tokens = masked_lm_loss(logits, batch["labels"].to(self.device))
                (loss_sum / n_tokens.clamp(min=1)).backward()
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.tokens_trained += n_tokens
                return loss_sum.detach()
    ''',
}, hazards=[hazard("train_lm.py", "self.tokens_trained = torch.zeros(1, device=device)",
                   "the second element of masked_lm_loss()'s tuple is an int64 token count; the run's "
                   "total token count is kept in float32 and passes 2^24 within hours")])

case("05-tuple-count-to-python-int", "1-tuple-return", {
    "train_lm.py": '''
        import torch
        import torch.nn.functional as F


        def masked_lm_loss(logits, labels, ignore_index=-100):
            keep = labels.ne(ignore_index)
            loss = F.cross_entropy(logits[keep], labels[keep], reduction="sum")
            return loss, keep.sum()


        def train_epoch(model, loader, optimizer, device):
            tokens_seen = 0
            loss_sum_epoch = torch.zeros((), device=device)
            for batch in loader:
                logits = model(batch["input_ids"].to(device))
                loss_sum, n_tokens = masked_lm_loss(logits, batch["labels"].to(device))
                (loss_sum / n_tokens.clamp(min=1)).backward()
                optimizer.step()
                optimizer.zero_grad()
                loss_sum_epoch += loss_sum.detach()
                tokens_seen += n_tokens.item()
            return loss_sum_epoch.item() / max(tokens_seen, 1), tokens_seen
    ''',
}, lookalike=True, note="the count goes into a Python int via .item(); only the loss goes into float32")

# ---------------------------------------------------------------- 1-tuple-assign
case("06-tuple-assign-pixel-accuracy", "1-tuple-assign", {
    "seg_metrics.py": '''
        import torch


        class PixelAccuracy:
            """Running pixel accuracy for semantic segmentation."""

            def __init__(self, ignore_index=255, device="cpu"):
                self.ignore_index = ignore_index
                self.device = device
                self.reset()

            def reset(self):
                self.correct, self.labelled = torch.zeros((), device=self.device), torch.zeros((), device=self.device)

            @torch.no_grad()
            def update(self, logits, target):
                pred = logits.argmax(dim=1)
                valid = target != self.ignore_index
                self.correct += ((pred == target) & valid).sum()
                self.labelled += valid.sum()

            def compute(self):
                return (self.correct / self.labelled.clamp(min=1)).item()
    ''',
}, hazards=[hazard("seg_metrics.py", "self.correct, self.labelled = torch.zeros(",
                   "both states are created by one tuple assignment in float32 and receive pixel "
                   "counts; a few 512x512 batches pass 2^24 pixels")])

case("07-tuple-assign-int64", "1-tuple-assign", {
    "seg_metrics.py": '''
        import torch


        class PixelAccuracy:
            def __init__(self, ignore_index=255):
                self.ignore_index = ignore_index
                self.hits, self.total = torch.zeros((), dtype=torch.int64), torch.zeros((), dtype=torch.int64)

            def update(self, logits, target):
                pred = logits.argmax(dim=1)
                valid = target != self.ignore_index
                self.hits += ((pred == target) & valid).sum()
                self.total += valid.sum()

            def compute(self):
                return self.hits.double() / self.total.clamp(min=1).double()
    ''',
}, lookalike=True, note="same tuple-assignment shape, but both counters are int64")

case("08-tuple-assign-local-counts", "1-tuple-assign", {
    "token_eval.py": '''
        import torch


        @torch.no_grad()
        def heldout_token_accuracy(model, loader, pad_label=-100):
            """Next-token accuracy over a held-out shard of the pretraining corpus."""
            model.eval()
            correct_total = torch.tensor(0.0)
            seen_total = torch.tensor(0.0)
            for tokens, labels in loader:
                scores = model(tokens)
                keep = labels != pad_label
                n_correct, n_seen = ((scores.argmax(-1) == labels) & keep).sum(), keep.sum()
                correct_total += n_correct
                seen_total += n_seen
            return correct_total / seen_total
    ''',
}, hazards=[
    hazard("token_eval.py", "correct_total = torch.tensor(0.0)",
           "n_correct comes from a tuple assignment of two int64 token counts; float32 total"),
    hazard("token_eval.py", "seen_total = torch.tensor(0.0)",
           "n_seen (second element of the tuple) is a token count summed in float32"),
])

case("09-tuple-swap-loss-buffers", "1-tuple-assign", {
    "ema_loss.py": '''
        import torch


        def smoothed_losses(losses, device="cpu"):
            prev, cur = torch.zeros((), device=device), torch.zeros((), device=device)
            history = []
            for loss in losses:
                prev, cur = cur, 0.9 * cur + 0.1 * loss.detach()
                history.append((cur - prev).abs().item())
            return history
    ''',
}, lookalike=True, note="a tuple swap of float loss buffers; no count is involved")

# ---------------------------------------------------------------- 1-cross-module
case("10-confmat-functional-module", "1-cross-module", {
    "segeval/__init__.py": '''
        from .confusion import ConfusionMatrix

        __all__ = ["ConfusionMatrix"]
    ''',
    "segeval/functional.py": '''
        import torch


        def _confusion_update(preds, target, num_classes, ignore_index=None):
            if preds.ndim == target.ndim + 1:
                preds = preds.argmax(dim=1)
            preds, target = preds.flatten(), target.flatten()
            if ignore_index is not None:
                keep = target != ignore_index
                preds, target = preds[keep], target[keep]
            unique = target * num_classes + preds
            counts = torch.bincount(unique, minlength=num_classes * num_classes)
            return counts.reshape(num_classes, num_classes)


        def _confusion_compute(confmat, normalize=None):
            if normalize == "true":
                return confmat / confmat.sum(dim=1, keepdim=True).clamp(min=1)
            return confmat
    ''',
    "segeval/confusion.py": '''
        import torch
        from torchmetrics import Metric

        from .functional import _confusion_compute, _confusion_update


        class ConfusionMatrix(Metric):
            full_state_update = False

            def __init__(self, num_classes, ignore_index=None, normalize=None, **kwargs):
                super().__init__(**kwargs)
                self.num_classes = num_classes
                self.ignore_index = ignore_index
                self.normalize = normalize
                self.add_state("confmat", default=torch.zeros(num_classes, num_classes), dist_reduce_fx="sum")

            def update(self, preds, target):
                self.confmat += _confusion_update(preds, target, self.num_classes, self.ignore_index)

            def compute(self):
                return _confusion_compute(self.confmat, self.normalize)
    ''',
}, hazards=[hazard("segeval/confusion.py", 'self.add_state("confmat"',
                   "_confusion_update in functional.py returns bincount counts; the state is float32, "
                   "so pixel counts past 2^24 per cell round (torchmetrics #187/#708)")])

case("11-mse-functional-module", "1-cross-module", {
    "regeval/__init__.py": '''
        from .mse import MeanSquaredError
    ''',
    "regeval/functional.py": '''
        import torch


        def _mse_update(preds, target):
            diff = preds.float() - target.float()
            return torch.sum(diff * diff), target.numel()


        def _mse_compute(sum_squared_error, n_obs):
            return sum_squared_error / n_obs
    ''',
    "regeval/mse.py": '''
        import torch
        from torchmetrics import Metric

        from .functional import _mse_compute, _mse_update


        class MeanSquaredError(Metric):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self.add_state("sum_squared_error", default=torch.tensor(0.0), dist_reduce_fx="sum")
                self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

            def update(self, preds, target):
                sse, n_obs = _mse_update(preds, target)
                self.sum_squared_error += sse
                self.total += n_obs

            def compute(self):
                return _mse_compute(self.sum_squared_error, self.total)
    ''',
}, lookalike=True, note="the float32 state sums squared errors (float values); the element count goes "
                        "into torch.tensor(0), which is int64")

# ---------------------------------------------------------------- 1-method-other-class
case("12-staticmethod-tokens-per-expert", "1-method-other-class", {
    "moe/router.py": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class TopKRouter(nn.Module):
            def __init__(self, hidden, num_experts, k=2):
                super().__init__()
                self.gate = nn.Linear(hidden, num_experts, bias=False)
                self.num_experts = num_experts
                self.k = k

            @staticmethod
            def tokens_per_expert(expert_idx, num_experts):
                return torch.bincount(expert_idx.flatten(), minlength=num_experts)

            def forward(self, x):
                probs = F.softmax(self.gate(x), dim=-1)
                weights, expert_idx = probs.topk(self.k, dim=-1)
                return weights, expert_idx
    ''',
    "moe/balance.py": '''
        import torch
        import torch.nn as nn

        from .router import TopKRouter


        class LoadMonitor(nn.Module):
            """Counts routed tokens per expert between two log intervals."""

            def __init__(self, num_experts):
                super().__init__()
                self.num_experts = num_experts
                self.register_buffer("routed", torch.zeros(num_experts), persistent=False)

            def observe(self, expert_idx):
                self.routed += TopKRouter.tokens_per_expert(expert_idx, self.num_experts)

            def flush(self):
                share = self.routed / self.routed.sum().clamp(min=1)
                self.routed.zero_()
                return share
    ''',
    "moe/__init__.py": '''
    ''',
}, hazards=[hazard("moe/balance.py", 'self.register_buffer("routed"',
                   "TopKRouter.tokens_per_expert (a staticmethod of another class) returns bincount "
                   "counts, summed over a log interval in a float32 buffer")])

case("13-method-of-stats-object", "1-method-other-class", {
    "trainer.py": '''
        import torch


        class BatchStats:
            def __init__(self, pad_id):
                self.pad_id = pad_id

            def tokens(self, batch):
                return (batch["input_ids"] != self.pad_id).sum()

            def sequences(self, batch):
                return batch["input_ids"].shape[0]


        class Trainer:
            def __init__(self, model, optimizer, pad_id, device="cuda"):
                self.model = model
                self.optimizer = optimizer
                self.stats = BatchStats(pad_id)
                self.total_tokens = torch.zeros(1, device=device)
                self.total_sequences = 0

            def step(self, batch):
                loss = self.model(**batch).loss
                loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
                self.total_tokens += self.stats.tokens(batch)
                self.total_sequences += self.stats.sequences(batch)
                return loss.detach()
    ''',
}, hazards=[hazard("trainer.py", "self.total_tokens = torch.zeros(1, device=device)",
                   "BatchStats.tokens, reached through self.stats, returns a token count; the run "
                   "total is float32")])

case("14-staticmethod-importance", "1-method-other-class", {
    "moe_layer.py": '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Gate(nn.Module):
            def __init__(self, dim, num_experts):
                super().__init__()
                self.proj = nn.Linear(dim, num_experts)

            @staticmethod
            def importance(probs):
                return probs.float().sum(dim=0)

            def forward(self, x):
                return F.softmax(self.proj(x), dim=-1)


        class ImportanceTracker(nn.Module):
            def __init__(self, num_experts):
                super().__init__()
                self.register_buffer("importance_sum", torch.zeros(num_experts), persistent=False)

            def observe(self, probs):
                self.importance_sum += Gate.importance(probs.detach())
    ''',
}, lookalike=True, note="the staticmethod returns summed router probabilities (float values), not counts")

# ---------------------------------------------------------------- 1-import-forms
case("15-reexport-relative-import", "1-import-forms", {
    "lmtrain/__init__.py": '''
        from .counting import count_loss_tokens
        from .loop import TrainLoop

        __all__ = ["count_loss_tokens", "TrainLoop"]
    ''',
    "lmtrain/counting.py": '''
        import torch


        def count_loss_tokens(labels, ignore_index=-100):
            shifted = labels[..., 1:]
            return torch.count_nonzero(shifted != ignore_index)
    ''',
    "lmtrain/loop.py": '''
        import torch

        from . import count_loss_tokens


        class TrainLoop:
            def __init__(self, model, optimizer, device):
                self.model = model
                self.optimizer = optimizer
                self.consumed_tokens = torch.tensor(0.0, device=device)

            def run(self, loader):
                for batch in loader:
                    out = self.model(input_ids=batch["input_ids"], labels=batch["labels"])
                    out.loss.backward()
                    self.optimizer.step()
                    self.optimizer.zero_grad()
                    self.consumed_tokens += count_loss_tokens(batch["labels"])
    ''',
}, hazards=[hazard("lmtrain/loop.py", "self.consumed_tokens = torch.tensor(0.0, device=device)",
                   "count_loss_tokens, re-exported by lmtrain/__init__.py from counting.py and imported "
                   "with `from . import`, returns count_nonzero; the consumed-token total is float32")])

case("16-import-module-as-alias", "1-import-forms", {
    "speechtrain/__init__.py": '''
    ''',
    "speechtrain/data/__init__.py": '''
    ''',
    "speechtrain/data/masking.py": '''
        import torch


        def num_frames(frame_mask):
            """Frames that are not padding, summed over the batch."""
            return frame_mask.bool().sum()
    ''',
    "speechtrain/epoch.py": '''
        import torch

        import speechtrain.data.masking as masking


        def run_epoch(model, loader, optimizer, device):
            frames_seen = torch.zeros((), device=device)
            for feats, frame_mask, targets in loader:
                loss = model(feats.to(device), frame_mask.to(device), targets.to(device))
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                frames_seen += masking.num_frames(frame_mask)
            return frames_seen
    ''',
}, hazards=[hazard("speechtrain/epoch.py", "frames_seen = torch.zeros((), device=device)",
                   "`import speechtrain.data.masking as masking`: num_frames returns a frame count; "
                   "an epoch of audio has far more than 2^24 frames, summed in float32")])

case("17-sibling-import-int64", "1-import-forms", {
    "visiontrain/__init__.py": '''
        from .counts import correct_top1
    ''',
    "visiontrain/counts.py": '''
        import torch


        def correct_top1(logits, target):
            return (logits.argmax(dim=1) == target).sum()
    ''',
    "visiontrain/validate.py": '''
        import torch

        from visiontrain import correct_top1


        @torch.no_grad()
        def validate(model, loader, device):
            model.eval()
            correct = torch.zeros((), dtype=torch.int64, device=device)
            seen = torch.zeros((), dtype=torch.int64, device=device)
            for images, target in loader:
                images, target = images.to(device), target.to(device)
                correct += correct_top1(model(images), target)
                seen += target.numel()
            return (correct.double() / seen.double()).item()
    ''',
}, lookalike=True, note="a re-exported helper returns counts, but both accumulators are int64")

case("18-sibling-import-float-mean", "1-import-forms", {
    "asrtrain/__init__.py": '''
    ''',
    "asrtrain/losses.py": '''
        import torch


        def ctc_loss_per_utt(log_probs, targets, in_lens, tgt_lens):
            loss = torch.nn.functional.ctc_loss(log_probs, targets, in_lens, tgt_lens, reduction="none")
            return loss / tgt_lens.clamp(min=1)
    ''',
    "asrtrain/loop.py": '''
        import torch

        from .losses import ctc_loss_per_utt


        def evaluate(model, loader, device):
            loss_sum = torch.zeros((), device=device)
            utterances = 0
            for feats, in_lens, targets, tgt_lens in loader:
                log_probs = model(feats.to(device)).log_softmax(-1).transpose(0, 1)
                per_utt = ctc_loss_per_utt(log_probs, targets, in_lens, tgt_lens)
                loss_sum += per_utt.sum()
                utterances += per_utt.numel()
            return loss_sum.item() / max(utterances, 1)
    ''',
}, lookalike=True, note="the sibling function returns per-utterance losses (floats); the utterance "
                        "count is a Python int")

# ---------------------------------------------------------------- 1-param-from-call-site
case("19-private-method-param", "1-param-from-call-site", {
    "meters.py": '''
        import torch


        class TokenThroughputMeter:
            def __init__(self, device="cuda"):
                self._tokens = torch.zeros((), device=device)
                self._steps = 0

            def _add(self, n):
                self._tokens += n

            def update(self, attention_mask):
                self._add(torch.count_nonzero(attention_mask))
                self._steps += 1

            def tokens_per_step(self):
                return self._tokens.item() / max(self._steps, 1)
    ''',
}, hazards=[hazard("meters.py", "self._tokens = torch.zeros((), device=device)",
                   "_add's parameter only ever receives count_nonzero(attention_mask) (a token count) from its "
                   "private call site; the total is float32")])

case("20-private-method-param-losses", "1-param-from-call-site", {
    "meters.py": '''
        import torch


        class LossMeter:
            def __init__(self, device="cuda"):
                self._total = torch.zeros((), device=device)
                self._count = torch.zeros((), dtype=torch.long, device=device)

            def _add(self, value):
                self._total += value

            def update(self, loss, batch_size):
                self._add(loss.detach() * batch_size)
                self._count += batch_size

            def average(self):
                return (self._total / self._count.clamp(min=1)).item()
    ''',
}, lookalike=True, note="_add only receives a float loss times a batch size; the count is int64")

case("21-helper-updates-param-inplace", "1-param-from-call-site", {
    "corpus_stats.py": '''
        import torch


        def _bump(counter, mask):
            counter += mask.sum()


        @torch.no_grad()
        def corpus_token_stats(loader, pad_id, unk_id):
            real_tokens = torch.zeros(())
            unknown_tokens = torch.zeros(())
            for input_ids in loader:
                _bump(real_tokens, input_ids != pad_id)
                _bump(unknown_tokens, input_ids == unk_id)
            return {"tokens": real_tokens.item(), "unk_rate": (unknown_tokens / real_tokens).item()}
    ''',
}, hazards=[
    hazard("corpus_stats.py", "real_tokens = torch.zeros(())",
           "_bump adds mask.sum() into its `counter` parameter in place; the caller passes a float32 "
           "zero tensor and scans a whole corpus"),
    hazard("corpus_stats.py", "unknown_tokens = torch.zeros(())",
           "the same helper counts unknown tokens into a second float32 tensor"),
])

case("117-calibration-bins-three-modules", "1-cross-module", {
    "calib/__init__.py": '''
        from .metric import TokenCalibrationError
    ''',
    "calib/binning.py": '''
        import torch


        def bin_statistics(confidence, correct, n_bins):
            """Per-bin confidence sums, correct counts and token counts for one batch."""
            idx = (confidence * n_bins).long().clamp(max=n_bins - 1)
            conf_sum = torch.zeros(n_bins, device=confidence.device).scatter_add_(0, idx, confidence)
            hits = torch.bincount(idx[correct], minlength=n_bins)
            counts = torch.bincount(idx, minlength=n_bins)
            return conf_sum, hits, counts
    ''',
    "calib/metric.py": '''
        import torch

        from . import binning


        class TokenCalibrationError:
            """Expected calibration error over every predicted token of an eval set."""

            def __init__(self, n_bins=15, device="cuda"):
                self.n_bins = n_bins
                self.conf_sum = torch.zeros(n_bins, device=device)
                self.hits = torch.zeros(n_bins, device=device)
                self.counts = torch.zeros(n_bins, device=device)

            def update(self, logits, labels):
                keep = labels != -100
                probs = logits[keep].float().softmax(-1)
                confidence, pred = probs.max(-1)
                conf_sum, hits, counts = binning.bin_statistics(confidence, pred == labels[keep], self.n_bins)
                self.conf_sum += conf_sum
                self.hits += hits
                self.counts += counts

            def compute(self):
                total = self.counts.sum()
                gap = (self.conf_sum - self.hits).abs()
                return (gap / total).sum().item()
    ''',
}, hazards=[
    hazard("calib/metric.py", "self.hits = torch.zeros(n_bins, device=device)",
           "binning.bin_statistics (another module, imported as `from . import binning`) returns bincount "
           "counts as the 2nd element of a tuple; float32 state over every eval token"),
    hazard("calib/metric.py", "self.counts = torch.zeros(n_bins, device=device)",
           "the 3rd element of the tuple is a per-bin token count, summed in float32"),
])

case("118-calibration-bins-int64-states", "1-cross-module", {
    "calib2/__init__.py": '''
    ''',
    "calib2/binning.py": '''
        import torch


        def bin_statistics(confidence, correct, n_bins):
            idx = (confidence * n_bins).long().clamp(max=n_bins - 1)
            conf_sum = torch.zeros(n_bins, device=confidence.device).scatter_add_(0, idx, confidence)
            hits = torch.bincount(idx[correct], minlength=n_bins)
            counts = torch.bincount(idx, minlength=n_bins)
            return conf_sum, hits, counts
    ''',
    "calib2/metric.py": '''
        import torch

        from .binning import bin_statistics


        class TokenCalibrationError:
            def __init__(self, n_bins=15, device="cuda"):
                self.n_bins = n_bins
                self.conf_sum = torch.zeros(n_bins, dtype=torch.float64, device=device)
                self.hits = torch.zeros(n_bins, dtype=torch.long, device=device)
                self.counts = torch.zeros(n_bins, dtype=torch.long, device=device)

            def update(self, confidence, correct):
                conf_sum, hits, counts = bin_statistics(confidence, correct, self.n_bins)
                self.conf_sum += conf_sum
                self.hits += hits
                self.counts += counts

            def compute(self):
                gap = (self.conf_sum - self.hits).abs()
                return (gap / self.counts.sum()).sum().item()
    ''',
}, lookalike=True, note="the same tuple of counts from another module goes into int64 states; the "
                        "confidence sum (floats) into float64")
