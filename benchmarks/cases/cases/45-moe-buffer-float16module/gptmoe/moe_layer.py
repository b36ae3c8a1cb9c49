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
