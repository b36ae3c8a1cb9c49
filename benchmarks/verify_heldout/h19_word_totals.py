import torch


def word_total(sentences):
    words = torch.tensor(0.0)
    for sentence in sentences:
        words += len(sentence.split())
    print(words.item())
