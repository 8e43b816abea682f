// graft/tensor.hpp - the plain data a host application passes in and gets out.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/variable.hpp"

namespace graft {

/// A dense float32 array in C order. The shape includes the batch dimension.
class Tensor {
public:
    Tensor() = default;
    explicit Tensor(Shape shape) : shape_(std::move(shape)), data_(checked_size(shape_)) {}
    Tensor(Shape shape, std::vector<float> data) : shape_(std::move(shape)), data_(std::move(data)) {
        if (data_.size() != checked_size(shape_))
            throw ShapeError("tensor of shape " + shape_str(shape_) + " needs " + std::to_string(checked_size(shape_)) +
                             " values, got " + std::to_string(data_.size()));
    }
    /// Copies `count` floats from a host buffer.
    Tensor(Shape shape, const float* data, std::size_t count) : Tensor(std::move(shape), std::vector<float>(data, data + count)) {}

    const Shape& shape() const noexcept { return shape_; }
    std::size_t size() const noexcept { return data_.size(); }
    const float* data() const noexcept { return data_.data(); }
    float* data() noexcept { return data_.data(); }
    const std::vector<float>& values() const noexcept { return data_; }
    std::vector<float>&& take() && { return std::move(data_); }

private:
    static std::size_t checked_size(const Shape& s) {
        std::size_t n = 1;
        for (auto d : s) {
            if (d < 0) throw ShapeError("tensor shape " + shape_str(s) + " has a negative dimension");
            n *= static_cast<std::size_t>(d);
        }
        return n;
    }
    Shape shape_;
    std::vector<float> data_;
};

}  // namespace graft
