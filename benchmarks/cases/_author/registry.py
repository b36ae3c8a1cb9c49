"""Case registry shared by build.py and the cases_*.py definition files."""

REGISTRY = []


def case(name, shape, files, hazards=(), lookalike=False, note=""):
    REGISTRY.append(dict(name=name, shape=shape, files=files, hazards=list(hazards),
                         lookalike=lookalike, note=note))


def hazard(path, anchors, why, fix=None):
    if isinstance(anchors, str):
        anchors = [anchors]
    out = dict(path=path, anchors=list(anchors), why=why)
    if fix is not None:
        out["fix"] = fix
    return out
