"""Every spelling of a device in replayed code becomes the target device:
`device=...`, `'cuda:1'`, `.cuda()`, `torch.cuda.FloatTensor`, `torch.cuda.current_device()`,
`torch.device(...)`, any other `torch.cuda.*`; `torch.autocast("cuda")` runs on the
target device's type. No torch here."""
from __future__ import annotations

import libcst as cst

from ..model.imports import dotted_name
from ..model.torch_api import AUTOCAST_CONTEXTS, REDUCING_COLLECTIVES
from .names import is_torch_cuda_name, is_torch_name
from .source_view import MAPPING, Edit, all_nodes

LEGACY_TYPES = frozenset(
    {"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"}
)  # fmt: skip


class DeviceMapping:
    """Edits that map devices (methods of `ReplayBuilder`)."""

    def _mappings(self) -> None:
        edits: list[Edit] = []
        for part in self.parts:
            for node in all_nodes(part.scope):
                edits.extend(self._mapping(node))
        seen, unique = set(), []
        for edit in edits:
            key = (edit.start, edit.end, edit.text, edit.transform is None)
            if key not in seen:
                seen.add(key)
                unique.append(edit)
        self.mapping_edits = unique

    def _mapping(self, node: cst.CSTNode) -> list[Edit]:
        offsets = self.source.offsets
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
            start, end = offsets(node.value)
            return [Edit(start, end, "__device", None, MAPPING)]
        if isinstance(node, cst.SimpleString):
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - an odd literal is simply not a device
                return []
            if isinstance(value, str) and (value == "cuda" or value.startswith("cuda:")):
                start, end = offsets(node)
                # `torch.autocast("cuda", ...)` takes a device type, a string, not a device
                return [Edit(start, end, "__device.type" if self._autocast_device(node) else "__device", None, MAPPING)]
            return []
        if isinstance(node, cst.FormattedString) and self.source.raw(node).lstrip("rfRF").lstrip("'\"").startswith("cuda"):
            start, end = offsets(node)
            return [Edit(start, end, "__device", None, MAPPING)]
        if not isinstance(node, cst.Call):
            return []
        name = dotted_name(node.func)
        qualified = self.imports.qualify_dotted(name) if name else None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and not is_torch_name(qualified):
            # `x.cuda()` is `x.to(<target device>)`
            self.mapped_calls.add(id(node))
            return [Edit(self.source.extent(func.value)[1], offsets(node)[1], ".to(__device)", None, MAPPING)]
        if qualified in ("torch.cuda.current_device", "torch.device"):
            self.mapped_calls.add(id(node))
            start, end = offsets(node)
            return [Edit(start, end, "__h.device()" if qualified == "torch.device" else "__device", None, MAPPING)]
        if qualified is not None and qualified.rsplit(".", 1)[-1] in LEGACY_TYPES and qualified.rsplit(".", 1)[0] in ("torch", "torch.cuda"):
            self.mapped_calls.add(id(node))
            start, end = offsets(func)
            return [Edit(start, end, "", lambda inner: f"__h.legacy({inner.rsplit('.', 1)[-1].strip()!r})", MAPPING)]
        if is_torch_cuda_name(qualified):
            self.mapped_calls.add(id(node))
            start, end = offsets(func)
            rest = qualified[len("torch.cuda.") :]
            return [Edit(start, end, f"__h.cuda({rest!r})", None, MAPPING)]
        if qualified in REDUCING_COLLECTIVES or qualified == "torch.distributed.broadcast":
            group = next((a for a in node.args if a.keyword is not None and a.keyword.value == "group"), None)
            if group is not None:
                start, end = offsets(group.value)
                return [Edit(start, end, "None", None, MAPPING)]  # the replay's own ranks
        return []

    def _autocast_device(self, node: cst.SimpleString) -> bool:
        """Whether the string is the device type of a `torch.autocast(...)`."""
        arg = self.source.parent(node)
        call = self.source.parent(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or arg.value is not node:
            return False
        name = dotted_name(call.func)
        if (self.imports.qualify_dotted(name) if name else None) not in AUTOCAST_CONTEXTS:
            return False
        return arg.keyword.value == "device_type" if arg.keyword is not None else call.args.index(arg) == 0

    # -- the slice -------------------------------------------------------------------------
