// graft::Config::Source over RapidJSON values. A Config::Node* is a rapidjson::Value* (cast back
// and forth here only).
#include "frontend/keras/json_config.hpp"

#include <utility>

namespace graft::keras {

namespace {

using Kind = Config::Kind;
using Node = Config::Node;

const rapidjson::Value& value(const Node* n) { return *reinterpret_cast<const rapidjson::Value*>(n); }
const Node* node(const rapidjson::Value* v) { return reinterpret_cast<const Node*>(v); }

class JsonSource final : public Config::Source {
public:
    Kind kind(const Node* n) const override {
        const auto& v = value(n);
        if (v.IsNull()) return Kind::null;
        if (v.IsBool()) return Kind::boolean;
        if (v.IsInt64()) return Kind::integer;
        if (v.IsNumber()) return Kind::number;
        if (v.IsString()) return Kind::string;
        if (v.IsArray()) return Kind::list;
        return Kind::object;
    }
    const Node* member(const Node* n, const char* key) const override {
        const auto& v = value(n);
        if (!v.IsObject()) return nullptr;
        const auto it = v.FindMember(key);
        return it == v.MemberEnd() ? nullptr : node(&it->value);
    }
    std::size_t size(const Node* n) const override { return value(n).IsArray() ? value(n).Size() : 0; }
    const Node* element(const Node* n, std::size_t i) const override {
        return node(&value(n)[static_cast<rapidjson::SizeType>(i)]);
    }
    bool boolean(const Node* n) const override { return value(n).GetBool(); }
    std::int64_t integer(const Node* n) const override { return value(n).GetInt64(); }
    double number(const Node* n) const override { return value(n).GetDouble(); }
    std::string text(const Node* n) const override { return std::string(value(n).GetString(), value(n).GetStringLength()); }
};

const JsonSource kSource{};

}  // namespace

Config json_config(const rapidjson::Value* v, std::string where) { return Config(&kSource, node(v), std::move(where)); }

const rapidjson::Value* json_value(const Config& c) {
    if (c.source() && c.source() != &kSource) throw Error(c.where() + ": the config is not RapidJSON's");
    return c.node() ? &value(c.node()) : nullptr;
}

}  // namespace graft::keras
