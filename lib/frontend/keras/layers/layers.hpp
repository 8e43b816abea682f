// Converter handlers for Keras layers, one file per family, and what they share.
#pragma once

#include <string>

#include "graft/frontend/layer.hpp"

namespace graft::keras {

/// Keras' activation name as graft's ("linear" for none). Keras 3's hard_sigmoid differs from
/// Keras 2's and is told apart by the saving version.
std::string activation_name(const LayerContext& ctx, const std::string& keras_name);

/// Applies the layer's "activation" config (if any, and not linear) to `v`.
Value apply_activation(LayerContext& ctx, const Value& v, const std::string& keras_name);

/// The logical order graft gives a Keras tensor of this rank: Keras' positional axes, batch first
/// and channels last (NC, NTC, NHWC, NDHWC; N, A1, A2, ... for other ranks).
Order positional_order(std::size_t rank);

/// A Keras axis index (negative counts from the end, batch is 0) as the axis of `v`.
Axis keras_axis(const LayerContext& ctx, const Value& v, std::int64_t axis);

/// Whether a layer works on channels_first data (data_format, or Keras 1's dim_ordering "th").
bool channels_first(const LayerContext& ctx);

/// The layer's first output, logical order as given.
inline void set_output(LayerContext& ctx, Variable* v, const Order& logical) { ctx.set_outputs({Value{v, logical}}); }

void register_core(Registry& r);
void register_conv(Registry& r);
void register_pooling(Registry& r);
void register_normalization(Registry& r);
void register_merge(Registry& r);
void register_activations(Registry& r);
void register_recurrent(Registry& r);
void register_wrappers(Registry& r);  // wrappers.cpp: Bidirectional, TimeDistributed
void register_embedding(Registry& r);  // embedding.cpp: Embedding, Masking
void register_attention(Registry& r);  // attention.cpp: Attention, AdditiveAttention, MultiHeadAttention
void register_reshaping(Registry& r);  // reshaping.cpp: ZeroPadding, Cropping, UpSampling, RepeatVector
void register_local(Registry& r);      // local.cpp: LocallyConnected1D, LocallyConnected2D
void register_conv_lstm(Registry& r);  // conv_lstm.cpp: ConvLSTM1D, ConvLSTM2D

}  // namespace graft::keras
