from .encoder import Encoder


def build(dim=512, layers=12):
    return Encoder(dim, layers).cuda().half()
