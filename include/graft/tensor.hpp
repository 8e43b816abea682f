// graft/tensor.hpp - the plain data a host application passes in and gets out.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/variable.hpp"

namespace graft {

/// The DType of a C++ element type: float, std::int64_t, std::int32_t, std::uint8_t,
/// std::uint16_t, std::int8_t, bool.
template <class T>
constexpr DType dtype_of() noexcept {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                      std::is_same_v<T, std::int8_t> || std::is_same_v<T, bool>,
                  "graft tensors hold float, int64_t, int32_t, uint8_t, uint16_t, int8_t or bool");
    if constexpr (std::is_same_v<T, float>) return DType::float32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return DType::int64;
    else if constexpr (std::is_same_v<T, std::int32_t>) return DType::int32;
    else if constexpr (std::is_same_v<T, std::uint8_t>) return DType::uint8;
    else if constexpr (std::is_same_v<T, std::uint16_t>) return DType::uint16;
    else if constexpr (std::is_same_v<T, std::int8_t>) return DType::int8;
    else return DType::boolean;
}

/// A dense array in C order, of one dtype (float32 unless made otherwise). The shape includes the
/// batch dimension. The float constructors and accessors are those of graft 0.1; a tensor of
/// another dtype is made with the typed constructor and read with data<T>() / values<T>(), and
/// reading it as another type throws DTypeError.
class Tensor {
public:
    Tensor() = default;
    /// Zeros of `dtype`.
    explicit Tensor(Shape shape, DType dtype = DType::float32) : dtype_(dtype), shape_(std::move(shape)) {
        const std::size_t n = checked_size(shape_);
        if (dtype_ == DType::float32) f32_.resize(n);
        else other_.resize(n * size_of(dtype_));
    }
    Tensor(Shape shape, std::vector<float> data) : shape_(std::move(shape)), f32_(std::move(data)) { check_count(f32_.size()); }
    /// Copies `count` floats from a host buffer.
    Tensor(Shape shape, const float* data, std::size_t count) : Tensor(std::move(shape), std::vector<float>(data, data + count)) {}
    /// A tensor of T's dtype (graft::dtype_of<T>()) holding `data` (for bool: the pointer form).
    template <class T, class = std::enable_if_t<!std::is_same_v<T, float> && !std::is_same_v<T, bool>>>
    Tensor(Shape shape, const std::vector<T>& data) : Tensor(std::move(shape), data.data(), data.size()) {}
    /// Copies `count` values of T's dtype from a host buffer.
    template <class T, class = std::enable_if_t<!std::is_same_v<T, float>>>
    Tensor(Shape shape, const T* data, std::size_t count) : dtype_(dtype_of<T>()), shape_(std::move(shape)) {
        check_count(count);
        other_.resize(count * sizeof(T));
        T* out = this->data<T>();
        for (std::size_t i = 0; i < count; ++i) out[i] = data[i];
    }

    DType dtype() const noexcept { return dtype_; }
    const Shape& shape() const noexcept { return shape_; }
    std::size_t size() const noexcept { return dtype_ == DType::float32 ? f32_.size() : other_.size() / size_of(dtype_); }

    /// float32 data; DTypeError for another dtype.
    const float* data() const { return values().data(); }
    float* data() { return const_cast<float*>(std::as_const(*this).data()); }
    const std::vector<float>& values() const {
        expect(DType::float32);
        return f32_;
    }
    std::vector<float>&& take() && {
        expect(DType::float32);
        return std::move(f32_);
    }

    /// The elements as T (T's dtype must be the tensor's; DTypeError otherwise).
    template <class T>
    const T* data() const {
        expect(dtype_of<T>());
        if constexpr (std::is_same_v<T, float>) return f32_.data();
        else return reinterpret_cast<const T*>(other_.data());
    }
    template <class T>
    T* data() {
        return const_cast<T*>(std::as_const(*this).template data<T>());
    }
    /// A copy of the elements as T (T's dtype must be the tensor's).
    template <class T>
    std::vector<T> values() const {
        const T* p = data<T>();
        return std::vector<T>(p, p + size());
    }
    /// Element i converted to double, whatever the dtype (for printing and checks).
    double at_double(std::size_t i) const {
        switch (dtype_) {
            case DType::float32: return f32_.at(i);
            case DType::int64: return static_cast<double>(element<std::int64_t>(i));
            case DType::int32: return element<std::int32_t>(i);
            case DType::uint8: return element<std::uint8_t>(i);
            case DType::uint16: return element<std::uint16_t>(i);
            case DType::int8: return element<std::int8_t>(i);
            case DType::boolean: return element<bool>(i) ? 1.0 : 0.0;
        }
        return 0;
    }

private:
    static std::size_t checked_size(const Shape& s) {
        std::size_t n = 1;
        for (auto d : s) {
            if (d < 0) throw ShapeError("tensor shape " + shape_str(s) + " has a negative dimension");
            n *= static_cast<std::size_t>(d);
        }
        return n;
    }
    void check_count(std::size_t count) const {
        if (count != checked_size(shape_))
            throw ShapeError("tensor of shape " + shape_str(shape_) + " needs " + std::to_string(checked_size(shape_)) +
                             " values, got " + std::to_string(count));
    }
    void expect(DType t) const {
        if (t != dtype_)
            throw DTypeError("the tensor holds " + std::string(name_of(dtype_)) + " values, read as " + name_of(t));
    }
    template <class T>
    T element(std::size_t i) const {
        if (i >= size()) throw ShapeError("element " + std::to_string(i) + " of a tensor of " + std::to_string(size()));
        return data<T>()[i];
    }

    DType dtype_ = DType::float32;
    Shape shape_;
    std::vector<float> f32_;                        // float32 elements
    std::vector<unsigned char> other_;  // any other dtype: size() * size_of(dtype) bytes (operator new aligns them for any T)
};

}  // namespace graft
