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
