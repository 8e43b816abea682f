// graft/ir/operator.hpp - a node of the graph: a type name, named inputs and outputs, attributes.
//
// What a type means (shapes, required orders) lives in its OpSchema in the Registry, so an
// Operator is plain data and serializes as type + attributes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/attributes.hpp"
#include "graft/ir/variable.hpp"
#include "graft/printable.hpp"

namespace graft {

using NamedVars = std::vector<std::pair<std::string, Variable*>>;

class Operator {
public:
    Operator(std::string type, std::string name, NamedVars inputs, Attributes attrs)
        : type_(std::move(type)), name_(std::move(name)), inputs_(std::move(inputs)), attrs_(std::move(attrs)) {}
    Operator(const Operator&) = delete;
    Operator& operator=(const Operator&) = delete;

    const std::string& type() const noexcept { return type_; }
    const std::string& name() const noexcept { return name_; }
    /// The framework layer this op came from ("dense_1"), for messages and summaries.
    const std::string& layer() const noexcept { return layer_; }
    void set_layer(std::string l) { layer_ = std::move(l); }

    const NamedVars& inputs() const noexcept { return inputs_; }
    const NamedVars& outputs() const noexcept { return outputs_; }
    Attributes& attrs() noexcept { return attrs_; }
    const Attributes& attrs() const noexcept { return attrs_; }

    bool has_input(const std::string& n) const noexcept { return find(inputs_, n) != nullptr; }
    Variable* input(const std::string& n) const { return require(inputs_, n, "input"); }
    Variable* output(const std::string& n) const { return require(outputs_, n, "output"); }
    Variable* input_or_null(const std::string& n) const noexcept { return find(inputs_, n); }
    Variable* output_or_null(const std::string& n) const noexcept { return find(outputs_, n); }

    /// "Conv2D 'conv2d_1'" for messages.
    /// "Type 'name'" for messages, control characters in the name (from a file) escaped.
    std::string describe() const { return type_ + " '" + printable(name_) + "'"; }

    template <class T>
    T attr(const std::string& key) const { return attrs_.get<T>(key, describe()); }
    template <class T>
    T attr_or(const std::string& key, T fallback) const { return attrs_.get_or<T>(key, fallback, describe()); }

private:
    friend class Graph;
    static Variable* find(const NamedVars& v, const std::string& n) noexcept {
        for (const auto& p : v)
            if (p.first == n) return p.second;
        return nullptr;
    }
    Variable* require(const NamedVars& v, const std::string& n, const char* what) const {
        if (auto* x = find(v, n)) return x;
        throw GraphError(describe() + " has no " + what + " '" + n + "'");
    }

    std::string type_, name_, layer_;
    NamedVars inputs_, outputs_;
    Attributes attrs_;
};

}  // namespace graft
