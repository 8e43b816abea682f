// graft/ir/attributes.hpp - typed operator attributes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/order.hpp"

namespace graft {

using AttrValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>, std::vector<double>,
                               std::vector<std::string>>;

inline const char* attr_type_name(const AttrValue& v) {
    static const char* names[] = {"bool", "int", "float", "string", "int list", "float list", "string list"};
    return names[v.index()];
}

class Attributes {
public:
    void set(const std::string& key, bool v) { m_[key] = v; }
    void set(const std::string& key, int v) { m_[key] = std::int64_t{v}; }
    void set(const std::string& key, std::int64_t v) { m_[key] = v; }
    void set(const std::string& key, double v) { m_[key] = v; }
    void set(const std::string& key, float v) { m_[key] = static_cast<double>(v); }
    void set(const std::string& key, const char* v) { m_[key] = std::string(v); }
    void set(const std::string& key, std::string v) { m_[key] = std::move(v); }
    void set(const std::string& key, std::vector<std::int64_t> v) { m_[key] = std::move(v); }
    void set(const std::string& key, std::vector<double> v) { m_[key] = std::move(v); }
    void set(const std::string& key, std::vector<std::string> v) { m_[key] = std::move(v); }
    void set(const std::string& key, const Axis& a) { m_[key] = a.name(); }
    void set(const std::string& key, const Order& o) { m_[key] = o.names(); }
    void set_value(const std::string& key, AttrValue v) { m_[key] = std::move(v); }

    bool has(const std::string& key) const { return m_.count(key) != 0; }
    void erase(const std::string& key) { m_.erase(key); }
    const std::map<std::string, AttrValue>& all() const noexcept { return m_; }

    /// The attribute as T; GraphError naming `owner` if missing or of another type.
    /// An int attribute reads as double too.
    template <class T>
    T get(const std::string& key, const std::string& owner = "") const {
        auto it = m_.find(key);
        if (it == m_.end()) throw GraphError(prefix(owner) + "missing attribute '" + key + "'");
        if constexpr (std::is_same_v<T, double>) {
            if (auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
        }
        if (auto* v = std::get_if<T>(&it->second)) return *v;
        throw GraphError(prefix(owner) + "attribute '" + key + "' is a " + attr_type_name(it->second) + ", expected another type");
    }
    template <class T>
    T get_or(const std::string& key, T fallback, const std::string& owner = "") const {
        return has(key) ? get<T>(key, owner) : fallback;
    }
    Axis get_axis(const std::string& key, const std::string& owner = "") const { return Axis(get<std::string>(key, owner)); }
    Order get_order(const std::string& key, const std::string& owner = "") const {
        return Order::from_names(get<std::vector<std::string>>(key, owner));
    }

    friend bool operator==(const Attributes& a, const Attributes& b) { return a.m_ == b.m_; }

private:
    static std::string prefix(const std::string& owner) { return owner.empty() ? "" : owner + ": "; }
    std::map<std::string, AttrValue> m_;
};

}  // namespace graft
