"""Expert routing statistics for the MoE layers."""
import torch


def tokens_per_expert(hidden_states, expert_ids, num_experts):
    # counted in the dtype the layer runs in: bfloat16 once the model is cast
    counts = torch.zeros(num_experts, dtype=hidden_states.dtype, device=hidden_states.device)  # expect: PH001
    for ids in expert_ids:
        counts += torch.bincount(ids.flatten(), minlength=num_experts)
    return counts.tolist()
