# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""Drop-in modules for torchvision's poolers, on roialign's torch operators (docs/torch.md).

``RoIAlign`` and ``MultiScaleRoIAlign`` take torchvision's constructor arguments and ``forward`` signatures and
compute the same results (within the tolerance of docs/semantics.md). ``ROIAlignRotated`` is detectron2's rotated
pooler (angles in degrees) and ``RoIAlignRotated`` mmcv's (radians, with its ``aligned`` and ``clockwise``). They
can be scripted, traced, saved and loaded (``torch.jit``), and ``torch.fx`` sees the op as one node. They train: the
gradient flows to the feature maps (not to the boxes, as in torchvision), through the operators' backward.
``replace_poolers(model)`` swaps torchvision's poolers in a model.
"""
import math
from typing import Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor, nn

from . import _pair, _torch_ops

_torch_ops.load()


def _rois(boxes: Union[Tensor, List[Tensor]]) -> Tensor:
    """[K, 5] rows (batch_index, x1, y1, x2, y2) from a [K, 5] tensor or from one [L_i, 4] tensor per image."""
    if isinstance(boxes, list):
        rows: List[Tensor] = []
        for i, b in enumerate(boxes):
            rows.append(torch.cat([torch.full_like(b[:, :1], float(i)), b], dim=1))
        if len(rows) == 0:
            return torch.zeros((0, 5))
        return torch.cat(rows, dim=0)
    return boxes


class RoIAlign(nn.Module):
    """``torchvision.ops.RoIAlign``'s module on ``torch.ops.roialign.roi_align``.

    ``layout="NHWC"`` pools channels_last maps (and returns a channels_last result); other layouts' inputs are
    converted first, as ``Tensor.contiguous`` would.
    """

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int, aligned: bool = False, *,
                 layout: str = "NCHW"):
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.aligned = bool(aligned)
        self.layout = layout

    def forward(self, input: Tensor, rois: Union[Tensor, List[Tensor]]) -> Tensor:
        return torch.ops.roialign.roi_align(input, _rois(rois), self.spatial_scale, self.output_size[0],
                                            self.output_size[1], self.sampling_ratio, self.aligned,
                                            layout=self.layout)

    def __repr__(self) -> str:
        return "%s(output_size=%s, spatial_scale=%s, sampling_ratio=%s, aligned=%s, layout=%r)" % (
            type(self).__name__, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned, self.layout)


class ROIAlignRotated(nn.Module):
    """detectron2's ``detectron2.layers.ROIAlignRotated`` on ``torch.ops.roialign.roi_align_rotated``: rois ``[K, 6]``
    rows ``(batch_index, cx, cy, w, h, angle)`` with the angle in degrees, counter-clockwise, aligned (the box moved by
    -0.5 pixel); ``sampling_ratio`` <= 0 is adaptive. ``layout="NHWC"`` pools channels_last maps.
    """

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int, *, layout: str = "NCHW"):
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.layout = layout

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:
        return torch.ops.roialign.roi_align_rotated(input, rois, self.spatial_scale, self.output_size[0],
                                                    self.output_size[1], self.sampling_ratio, True, False,
                                                    angle_unit="DEGREES", layout=self.layout)

    def __repr__(self) -> str:
        return "%s(output_size=%s, spatial_scale=%s, sampling_ratio=%s, layout=%r)" % (
            type(self).__name__, self.output_size, self.spatial_scale, self.sampling_ratio, self.layout)


class RoIAlignRotated(nn.Module):
    """mmcv's ``mmcv.ops.RoIAlignRotated`` on ``torch.ops.roialign.roi_align_rotated``: rois ``[K, 6]`` rows
    ``(batch_index, cx, cy, w, h, angle)`` with the angle in radians; ``aligned`` (True: the box moved by -0.5 pixel;
    False: no shift, w and h at least 1 pixel) and ``clockwise`` as mmcv's; ``sampling_ratio`` <= 0 is adaptive.
    Exports to ONNX as mmcv's node ``mmcv::MMCVRoIAlignRotated``. ``layout="NHWC"`` pools channels_last maps.
    """

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int = 0, aligned: bool = True,
                 clockwise: bool = False, *, layout: str = "NCHW"):
        super().__init__()
        self.output_size = _pair(output_size)
        self.spatial_scale = float(spatial_scale)
        self.sampling_ratio = int(sampling_ratio)
        self.aligned = bool(aligned)
        self.clockwise = bool(clockwise)
        self.layout = layout

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:
        return torch.ops.roialign.roi_align_rotated(input, rois, self.spatial_scale, self.output_size[0],
                                                    self.output_size[1], self.sampling_ratio, self.aligned,
                                                    self.clockwise, angle_unit="RADIANS", layout=self.layout)

    def __repr__(self) -> str:
        return "%s(output_size=%s, spatial_scale=%s, sampling_ratio=%s, aligned=%s, clockwise=%s, layout=%r)" % (
            type(self).__name__, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned,
            self.clockwise, self.layout)


def _infer_scale(size: int, original: int) -> float:
    # The power of two nearest the map-to-image ratio, as torchvision infers each level's scale.
    return 2.0 ** float(round(math.log(float(size) / float(original)) / math.log(2.0)))


# One leaf for torch.fx, as torchvision's pooler is: symbolic tracing records a call of this function instead of
# iterating over the feature dict and the image shapes, which are proxies there (torchvision's get_graph_node_names
# and create_feature_extractor then trace a model after replace_poolers). TorchScript and torch.compile see through it.
@torch.fx.wrap
def _multi_scale_roi_align(x: Dict[str, Tensor], boxes: List[Tensor], image_shapes: List[Tuple[int, int]],
                           featmap_names: List[str], output_size: Tuple[int, int], sampling_ratio: int,
                           canonical_scale: int, canonical_level: int, layout: str) -> Tensor:
    features: List[Tensor] = []
    for name, f in x.items():  # in the dict's order, as torchvision takes them
        if name in featmap_names:
            features.append(f)
    if len(image_shapes) == 0:
        raise ValueError("roialign: image_shapes is empty; give each image's (height, width)")
    max_h = 0
    for shape in image_shapes:
        max_h = max(max_h, int(shape[0]))
    scales: List[float] = []
    for f in features:  # torchvision infers each level's scale from the heights
        scales.append(_infer_scale(int(f.shape[-2]), max_h))
    return torch.ops.roialign.multi_scale_roi_align(features, _rois(boxes), scales, output_size[0], output_size[1],
                                                    sampling_ratio, False, level_rule="SCALE",
                                                    canonical_size=float(canonical_scale),
                                                    canonical_level=canonical_level, layout=layout)


class MultiScaleRoIAlign(nn.Module):
    """``torchvision.ops.MultiScaleRoIAlign``'s module on one ``torch.ops.roialign.multi_scale_roi_align`` call.

    Levels are chosen as torchvision chooses them (``floor(canonical_level + log2(sqrt(area) / canonical_scale) +
    1e-6)``, clamped to the levels of the first and last maps' scales), with each level's scale inferred from
    ``image_shapes``; the maps are pooled in one call, without a per-level loop or scatter.
    """

    def __init__(self, featmap_names: List[str], output_size, sampling_ratio: int, *, canonical_scale: int = 224,
                 canonical_level: int = 4, layout: str = "NCHW"):
        super().__init__()
        if isinstance(featmap_names, str):
            featmap_names = [featmap_names]
        self.featmap_names = list(featmap_names)
        self.output_size = _pair(output_size)
        self.sampling_ratio = int(sampling_ratio)
        self.canonical_scale = int(canonical_scale)
        self.canonical_level = int(canonical_level)
        self.layout = layout

    def forward(self, x: Dict[str, Tensor], boxes: List[Tensor], image_shapes: List[Tuple[int, int]]) -> Tensor:
        return _multi_scale_roi_align(x, boxes, image_shapes, self.featmap_names, self.output_size,
                                      self.sampling_ratio, self.canonical_scale, self.canonical_level, self.layout)

    def __repr__(self) -> str:
        return "%s(featmap_names=%s, output_size=%s, sampling_ratio=%s, layout=%r)" % (
            type(self).__name__, self.featmap_names, self.output_size, self.sampling_ratio, self.layout)


def replace_poolers(model: nn.Module, *, layout: str = "NCHW") -> nn.Module:
    """Replaces every torchvision RoIAlign and MultiScaleRoIAlign in ``model`` (in place) with roialign's; returns it."""
    import torchvision.ops

    def swap(module: nn.Module) -> Optional[nn.Module]:
        if isinstance(module, torchvision.ops.MultiScaleRoIAlign):
            canonical_scale = module.map_levels.s0 if getattr(module, "map_levels", None) else 224
            canonical_level = module.map_levels.lvl0 if getattr(module, "map_levels", None) else 4
            return MultiScaleRoIAlign(module.featmap_names, module.output_size, module.sampling_ratio,
                                      canonical_scale=getattr(module, "canonical_scale", canonical_scale),
                                      canonical_level=getattr(module, "canonical_level", canonical_level),
                                      layout=layout)
        if isinstance(module, torchvision.ops.RoIAlign):
            return RoIAlign(module.output_size, module.spatial_scale, module.sampling_ratio, module.aligned,
                            layout=layout)
        return None

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            replacement = swap(child)
            if replacement is not None:
                setattr(parent, name, replacement)
    return model
