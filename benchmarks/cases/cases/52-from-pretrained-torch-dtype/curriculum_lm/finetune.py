import torch

from .modeling import CurriculumLM


def load(path):
    return CurriculumLM.from_pretrained(path, torch_dtype=torch.bfloat16).cuda()
