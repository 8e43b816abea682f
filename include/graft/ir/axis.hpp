// graft/ir/axis.hpp - named dimensions.
//
// An Axis names what a dimension means (batch, channel, height, ...). Axes compare by name, so
// a user-made Axis("K") is as good as a predefined one and survives serialization unchanged.
#pragma once

#include <string>
#include <utility>

namespace graft {

class Axis {
public:
    explicit Axis(std::string name) : name_(std::move(name)) {}

    const std::string& name() const noexcept { return name_; }

    friend bool operator==(const Axis& a, const Axis& b) noexcept { return a.name_ == b.name_; }
    friend bool operator!=(const Axis& a, const Axis& b) noexcept { return a.name_ != b.name_; }
    friend bool operator<(const Axis& a, const Axis& b) noexcept { return a.name_ < b.name_; }

    static const Axis N;  ///< batch
    static const Axis C;  ///< channels / features
    static const Axis H;  ///< height
    static const Axis W;  ///< width
    static const Axis T;  ///< time / sequence
    static const Axis D;  ///< depth (3-D data)

private:
    std::string name_;
};

inline const Axis Axis::N{"N"};
inline const Axis Axis::C{"C"};
inline const Axis Axis::H{"H"};
inline const Axis Axis::W{"W"};
inline const Axis Axis::T{"T"};
inline const Axis Axis::D{"D"};

}  // namespace graft
