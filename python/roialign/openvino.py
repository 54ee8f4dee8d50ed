# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
"""roialign under OpenVINO's own ROIAlignRotated-15, through OpenVINO's public Python API only.

    import openvino as ov, roialign.openvino
    core = ov.Core()
    core.add_extension(EXTENSION)                  # libroialign_openvino.so (engines/openvino)
    model = ...                                    # an ov.Model with opset15 ROIAlignRotated nodes
    roialign.openvino.replace_roi_align_rotated(model, EXTENSION)
    compiled = core.compile_model(model, "CPU")

Every opset15 ``ROIAlignRotated`` whose RoIs are f32 becomes the extension's ``RoialignRoiAlignRotated`` on the same
inputs (its [K,5] RoIs and batch indices), with the same friendly name: RADIANS, HALF_PIXEL (ROIAlignRotated-15 is
always aligned), average pooling, and COUNTER_CLOCKWISE or CLOCKWISE from ``clockwise_mode``. A node the library
refuses (the op's constructor selects roialign's kernel and raises) stays OpenVINO's. The pass is an
``openvino.passes.MatcherPass`` (``WrapType("opset15.ROIAlignRotated")``) run by ``openvino.passes.Manager``; the
replacement is made by ``openvino.utils.node_factory.NodeFactory.add_extension``, which creates the extension's op
by name. C++ callers have the same pass in the library (``roialign_openvino::ReplaceRoiAlignRotated``, and the
exported ``roialign_openvino_replace_roi_align_rotated``); docs/openvino.md#rotated-rois says where each applies.

This module imports openvino; ``import roialign`` does not. It uses nothing else of the package, so it also works
loaded on its own from its file.
"""
import openvino
from openvino.passes import Manager, Matcher, MatcherPass, WrapType
from openvino.utils import replace_node
from openvino.utils.node_factory import NodeFactory

OP_TYPE = "RoialignRoiAlignRotated"


def _attributes_of(node):
    a = node.get_attributes()
    return {"pooled_height": int(a["pooled_h"]), "pooled_width": int(a["pooled_w"]),
            "spatial_scale": float(a["spatial_scale"]), "sampling_ratio": int(a["sampling_ratio"]),
            "coordinate_mode": "HALF_PIXEL", "angle_unit": "RADIANS",
            "rotation": "CLOCKWISE" if a["clockwise_mode"] else "COUNTER_CLOCKWISE", "pool_mode": "AVG"}


class ReplaceRoiAlignRotated(MatcherPass):
    """The MatcherPass of :func:`replace_roi_align_rotated`; ``replaced`` counts the nodes it replaced."""

    def __init__(self, extension):
        MatcherPass.__init__(self)
        self.factory = NodeFactory()
        self.factory.add_extension(str(extension))
        self.replaced = 0

        def callback(matcher):
            node = matcher.get_match_root()
            if node.get_type_name() != "ROIAlignRotated" or node.get_input_element_type(1) != openvino.Type.f32:
                return False
            try:
                ours = self.factory.create(OP_TYPE, [node.input_value(i) for i in range(node.get_input_size())],
                                           _attributes_of(node))
            except Exception:  # roialign refuses it: OpenVINO's own op stays
                return False
            ours.set_friendly_name(node.get_friendly_name())
            replace_node(node, ours)
            self.replaced += 1
            return True

        self.register_matcher(Matcher(WrapType("opset15.ROIAlignRotated"), "ReplaceRoiAlignRotated"), callback)


def replace_roi_align_rotated(model, extension):
    """Replaces, in place, every opset15 ROIAlignRotated of ``model`` (an ``openvino.Model``) that roialign serves by
    the op of the extension library at path ``extension``; returns how many it replaced. Compile the model with a
    Core that has the same library added (``core.add_extension``)."""
    replace = ReplaceRoiAlignRotated(extension)
    manager = Manager()
    manager.register_pass(replace)
    manager.run_passes(model)
    return replace.replaced
