import torch

from .ema_teacher import ConsistencyTeacher


def build_teacher(net):
    teacher = ConsistencyTeacher(net).cuda()
    teacher.bfloat16()
    return teacher
