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
