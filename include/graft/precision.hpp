// graft/precision.hpp - the arithmetic a model's products run in (LoadOptions::precision).
#pragma once

#include <optional>
#include <string>

namespace graft {

/// fp32 (the default) runs every product in float and matches the framework's own results to
/// float rounding. int8 quantises constant weights per output column, and the inputs per row
/// at run time, multiplies in integers and scales back: Dense / MatMul, the W and R products of
/// LSTM, GRU and SimpleRNN, and Conv1D / Conv2D whose patches have 32 taps or more (kernel
/// height x width x input channels; each output pixel's patch is one row), but for the 3x3
/// ones Winograd runs with 64 output channels or fewer (faster in fp32). About 1% of the
/// outputs' range in error, for a quarter of the weights' bytes. It is a request: on a CPU
/// without the instructions that make it faster (AVX2 on x86) the model runs in fp32, and
/// Model::precision() says which ran. Depthwise, 3-D and transposed convolutions stay fp32.
///
/// bf16 rounds the same weights to bfloat16 once and each input row at run time, and sums the
/// products in float: about 2^-8 of each product's size in error, for half the weights' bytes
/// and twice fp32's multiply-adds per instruction. Convolutions that run Winograd stay fp32
/// (it saves more than bf16 would). It runs where the CPU has AVX-512 BF16 (vdpbf16ps), and is
/// fp32 elsewhere.
enum class Precision { fp32, int8, bf16 };

inline const char* precision_name(Precision p) noexcept {
    return p == Precision::int8 ? "int8" : p == Precision::bf16 ? "bf16" : "fp32";
}

/// "fp32", "int8" or "bf16"; nullopt for anything else.
inline std::optional<Precision> parse_precision(const std::string& s) {
    if (s == "fp32") return Precision::fp32;
    if (s == "int8") return Precision::int8;
    if (s == "bf16") return Precision::bf16;
    return std::nullopt;
}

}  // namespace graft
