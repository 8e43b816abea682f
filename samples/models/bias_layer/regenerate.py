#!/usr/bin/python3
"""Writes samples/models/bias_layer/: the classic Keras custom-layer example, as tf.keras 2.15 saves it.

    class BiasLayer(tf.keras.layers.Layer):           # trainable: one weight 'bias' per feature
        def build(self, input_shape):
            self.bias = self.add_weight('bias', shape=(input_shape[-1],), initializer='zeros', trainable=True)
        def call(self, x):
            return x + self.bias

    model = tf.keras.Sequential([tf.keras.Input((10,)), BiasLayer()])   # then trained until bias = 100
    model.predict([[0, 1, ..., 9]])  ->  [[100, 101, ..., 109]]

model.h5 (tf.keras 2.15 `model.save()` layout, written with h5py by tests/fixtures/gen/variant_io.py and read
back), input.npy ([[0 .. 9]]), expected.npy (input + 100, numpy), manifest.json (needs_plugin BiasLayer).
Deterministic.  Usage: /usr/bin/python3 samples/models/bias_layer/regenerate.py
"""
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', '..', 'tests', 'fixtures', 'gen'))
from variant_io import write_legacy_h5, write_manifest  # noqa: E402

config = {'class_name': 'Sequential', 'config': {'name': 'sequential', 'layers': [
    {'class_name': 'InputLayer', 'config': {'batch_input_shape': [None, 10], 'dtype': 'float32', 'sparse': False,
                                            'ragged': False, 'name': 'input_1'}},
    {'class_name': 'BiasLayer', 'config': {'name': 'bias_layer', 'trainable': True, 'dtype': 'float32'}}]}}
bias = np.full((10,), 100.0, dtype='<f4')
write_legacy_h5(os.path.join(HERE, 'model.h5'), config, '2.15.0', [('bias_layer', [('bias_layer/bias:0', bias)])], 'tfkeras')
x = np.arange(10, dtype='<f4').reshape(1, 10)
np.save(os.path.join(HERE, 'input.npy'), x)
np.save(os.path.join(HERE, 'expected.npy'), (x.astype(np.float64) + bias).astype('<f4'))
write_manifest(HERE, 'model.h5', [('input_1', 'input.npy')], [('bias_layer', 'expected.npy')], ['BiasLayer'], '2.15.0',
               'numpy: input + bias (the weight in model.h5, 100 for every feature)')
man = json.load(open(os.path.join(HERE, 'manifest.json')))
man['needs_plugin'] = 'BiasLayer'
with open(os.path.join(HERE, 'manifest.json'), 'w') as fo:
    fo.write(json.dumps(man, indent=1))
print('sample model OK: %s' % HERE)
