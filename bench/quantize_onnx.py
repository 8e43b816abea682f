#!/usr/bin/env python3
"""Dynamic int8 quantisation of an ONNX model's matrix products, for ONNX Runtime's side of
`node bench/compare.js --precision int8`.

    /usr/bin/python3 bench/quantize_onnx.py MODEL.onnx OUT.onnx

onnxruntime's own `quantize_dynamic` is a Python package this workplace cannot install (Debian has
python3-onnx, not onnxruntime), so this writes the graph that tool writes for a MatMul or Gemm whose
weight is a constant 2-D initializer (per_channel=True, weight_type=QInt8, activations uint8):

    x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zero) -> MatMulInteger(x_q, W_q, x_zero, 0)
      -> Cast(float) -> Mul(x_scale * W_scale[n]) [-> Add(bias)]

with W_q = round(W / W_scale[n]), W_scale[n] = max_k |W[k, n]| / 127 (symmetric per output column,
as graft's int8). ORT's graph optimizer fuses the chain into its MatMulIntegerToFloat kernel, the same
kernel quantize_dynamic's output runs. A Conv whose weight is a constant initializer becomes, as
quantize_dynamic writes it,

    x -> DynamicQuantizeLinear -> ConvInteger(x_q, W_q, x_zero, W_zero) -> Cast(float)
      -> Mul(x_scale * W_scale[m]) [-> Add(bias)]

with W scaled per output channel m like the MatMul weights (every group count, depthwise included:
quantize_dynamic quantises them all; graft's int8 keeps depthwise convolutions in float). The
weights go in as u8 q + 128 with zero point 128 (the same values; quantize_dynamic's
weight_type=QUInt8 form): ORT 1.30 runs ConvInteger with s8 weights too, but 4x slower (Keras
ResNet-18 at batch 1, 1 thread: 134 ms against 32 ms), so u8 is ORT at its best. LSTM stays float (quantize_dynamic's DynamicQuantizeLSTM is a contrib op). Prints how many
products it quantised; the output is written to a temporary name and renamed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantise_conv(g, node, w):
    """The ConvInteger chain for Conv `node` with weight w [M, C/group, k...]."""
    m = w.shape[0]
    scale = np.abs(w.reshape(m, -1)).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    bshape = (m,) + (1,) * (w.ndim - 2)  # per channel over [N, M, spatial...]
    wq = np.clip(np.rint(w / scale.reshape((m,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int16)
    p = f'{node.name or node.output[0]}_q'
    g.initializer.extend([numpy_helper.from_array((wq + 128).astype(np.uint8), f'{p}_W'),
                          numpy_helper.from_array(np.array(128, np.uint8), f'{p}_Wzero'),
                          numpy_helper.from_array(scale.astype(np.float32).reshape(bshape), f'{p}_Wscale')])
    out = node.output[0]
    has_bias = len(node.input) > 2 and node.input[2]
    conv = helper.make_node('ConvInteger', [f'{p}_x', f'{p}_W', f'{p}_xz', f'{p}_Wzero'], [f'{p}_i32'], name=f'{p}_conv')
    conv.attribute.extend(a for a in node.attribute)  # strides, pads, dilations, group, kernel_shape
    nodes = [
        helper.make_node('DynamicQuantizeLinear', [node.input[0]], [f'{p}_x', f'{p}_xs', f'{p}_xz'], name=f'{p}_dq'),
        conv,
        helper.make_node('Cast', [f'{p}_i32'], [f'{p}_f'], to=TensorProto.FLOAT, name=f'{p}_cast'),
        helper.make_node('Mul', [f'{p}_xs', f'{p}_Wscale'], [f'{p}_s'], name=f'{p}_scale'),
        helper.make_node('Mul', [f'{p}_f', f'{p}_s'], [f'{p}_y' if has_bias else out], name=f'{p}_mul'),
    ]
    if has_bias:
        g.initializer.append(numpy_helper.from_array(np.array(bshape, np.int64), f'{p}_bshape'))
        nodes += [helper.make_node('Reshape', [node.input[2], f'{p}_bshape'], [f'{p}_b'], name=f'{p}_breshape'),
                  helper.make_node('Add', [f'{p}_y', f'{p}_b'], [out], name=f'{p}_bias')]
    return nodes


def quantise(model):
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    nodes, count = [], 0
    for node in g.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        w_name = node.input[1] if len(node.input) > 1 else None
        if node.op_type == 'Conv' and w_name in inits:
            nodes += quantise_conv(g, node, numpy_helper.to_array(inits[w_name]).astype(np.float32))
            count += 1
            continue
        ok = node.op_type in ('MatMul', 'Gemm') and w_name in inits and len(inits[w_name].dims) == 2
        if node.op_type == 'Gemm':
            ok = ok and attrs.get('transA', 0) == 0 and attrs.get('alpha', 1.0) == 1.0 and attrs.get('beta', 1.0) == 1.0
        if not ok:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
        if node.op_type == 'Gemm' and attrs.get('transB', 0):
            w = w.T
        scale = np.abs(w).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        wq = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        p = f'{node.name or node.output[0]}_q'
        g.initializer.extend([numpy_helper.from_array(wq, f'{p}_W'),
                              numpy_helper.from_array(np.zeros(wq.shape[1], np.int8), f'{p}_Wzero'),
                              numpy_helper.from_array(scale.astype(np.float32), f'{p}_Wscale')])
        out = node.output[0]
        has_bias = node.op_type == 'Gemm' and len(node.input) > 2 and node.input[2]
        nodes += [
            helper.make_node('DynamicQuantizeLinear', [node.input[0]], [f'{p}_x', f'{p}_xs', f'{p}_xz'], name=f'{p}_dq'),
            helper.make_node('MatMulInteger', [f'{p}_x', f'{p}_W', f'{p}_xz', f'{p}_Wzero'], [f'{p}_i32'], name=f'{p}_mm'),
            helper.make_node('Cast', [f'{p}_i32'], [f'{p}_f'], to=TensorProto.FLOAT, name=f'{p}_cast'),
            helper.make_node('Mul', [f'{p}_xs', f'{p}_Wscale'], [f'{p}_s'], name=f'{p}_scale'),
            helper.make_node('Mul', [f'{p}_f', f'{p}_s'], [f'{p}_y' if has_bias else out], name=f'{p}_mul'),
        ]
        if has_bias:
            nodes.append(helper.make_node('Add', [f'{p}_y', node.input[2]], [out], name=f'{p}_bias'))
        count += 1
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return count


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: quantize_onnx.py MODEL.onnx OUT.onnx')
    model = onnx.load(sys.argv[1])
    count = quantise(model)
    onnx.checker.check_model(model)
    tmp = f'{sys.argv[2]}.tmp-{os.getpid()}'
    onnx.save(model, tmp)
    os.replace(tmp, sys.argv[2])
    print(f'{sys.argv[2]}: {count} matrix products and convolutions quantised to int8')


if __name__ == '__main__':
    main()
