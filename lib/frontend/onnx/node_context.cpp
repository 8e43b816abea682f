// NodeContext: an ONNX node as converters see it. Its attributes are shown as a graft::Config
// through a Config::Source over the NodeProto (no JSON involved): INT as an integer, FLOAT as a
// number, STRING as a string, INTS / FLOATS / STRINGS as lists; a Config::Node* points to an
// AttrNode this source keeps.
#include "frontend/onnx/node_context.hpp"

#include "graft/frontend/onnx.hpp"

namespace graft::onnx {

Order positional_order(std::size_t rank) {
    check_rank(rank, "a value");
    switch (rank) {
        case 0: return Order{};
        case 1: return OrderC;
        case 2: return OrderNC;
        case 3: return OrderNCT;
        case 4: return OrderNCHW;
        case 5: return OrderNCDHW;
        default: {
            std::vector<Axis> axes{Axis::N, Axis::C};
            for (std::size_t i = 2; i < rank; ++i) axes.emplace_back("A" + std::to_string(i));
            return Order(std::move(axes));
        }
    }
}

class NodeContext::Attributes final : public Config::Source {
public:
    explicit Attributes(const ::onnx::NodeProto& n) : node_(n) {}

    const Config::Node* root() const { return make({nullptr, -1}); }

    Config::Kind kind(const Config::Node* n) const override {
        const AttrNode& a = get(n);
        if (!a.attr) return Config::Kind::object;
        using A = ::onnx::AttributeProto;
        const auto t = a.attr->type();
        if (a.index >= 0) return t == A::INTS ? Config::Kind::integer : t == A::FLOATS ? Config::Kind::number : Config::Kind::string;
        switch (t) {
            case A::INT: return Config::Kind::integer;
            case A::FLOAT: return Config::Kind::number;
            case A::STRING: return Config::Kind::string;
            case A::INTS: case A::FLOATS: case A::STRINGS: return Config::Kind::list;
            default: return Config::Kind::object;  // tensors, graphs: present, read elsewhere
        }
    }
    const Config::Node* member(const Config::Node* n, const char* key) const override {
        if (get(n).attr) return nullptr;
        for (const auto& a : node_.attribute())
            if (a.name() == key) return make({&a, -1});
        return nullptr;
    }
    std::size_t size(const Config::Node* n) const override {
        const AttrNode& a = get(n);
        if (!a.attr || a.index >= 0) return 0;
        using A = ::onnx::AttributeProto;
        switch (a.attr->type()) {
            case A::INTS: return static_cast<std::size_t>(a.attr->ints_size());
            case A::FLOATS: return static_cast<std::size_t>(a.attr->floats_size());
            case A::STRINGS: return static_cast<std::size_t>(a.attr->strings_size());
            default: return 0;
        }
    }
    const Config::Node* element(const Config::Node* n, std::size_t i) const override {
        return make({get(n).attr, static_cast<int>(i)});
    }
    bool boolean(const Config::Node*) const override { return false; }  // ONNX has no boolean attributes
    std::int64_t integer(const Config::Node* n) const override {
        const AttrNode& a = get(n);
        return a.index >= 0 ? a.attr->ints(a.index) : a.attr->i();
    }
    double number(const Config::Node* n) const override {
        const AttrNode& a = get(n);
        using A = ::onnx::AttributeProto;
        if (a.attr->type() == A::INT || a.attr->type() == A::INTS) return static_cast<double>(integer(n));
        return a.index >= 0 ? a.attr->floats(a.index) : a.attr->f();
    }
    std::string text(const Config::Node* n) const override {
        const AttrNode& a = get(n);
        return a.index >= 0 ? a.attr->strings(a.index) : a.attr->s();
    }

private:
    struct AttrNode {
        const ::onnx::AttributeProto* attr;  // null: the node itself (the object of all attributes)
        int index;                           // element of a list attribute, -1: the attribute itself
    };
    const Config::Node* make(AttrNode a) const {
        nodes_.push_back(a);
        return reinterpret_cast<const Config::Node*>(&nodes_.back());
    }
    static const AttrNode& get(const Config::Node* n) { return *reinterpret_cast<const AttrNode*>(n); }

    const ::onnx::NodeProto& node_;
    mutable std::deque<AttrNode> nodes_;  // a deque: the addresses handed out stay valid
};

NodeContext::NodeContext(const ModelFile& file, const ::onnx::NodeProto& node, std::string name, std::int64_t opset,
                         std::vector<Slot*> inputs, Graph& g, const Registry& registry, DynamicBatch& batch)
    : file_(file),
      node_(node),
      name_(std::move(name)),
      class_(converter_key(node.domain(), node.op_type())),
      opset_(opset),
      attrs_(std::make_shared<Attributes>(node)),
      inputs_(std::move(inputs)),
      outputs_(static_cast<std::size_t>(node.output_size())),
      set_(static_cast<std::size_t>(node.output_size()), false),
      graph_(g),
      registry_(registry),
      batch_(batch) {
    const auto& m = file.proto;
    producer_ = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
    config_ = Config(attrs_.get(), attrs_->root(), file.path + ": node '" + name_ + "' (" + class_ + ")");
}

const std::string& NodeContext::frontend() const {
    static const std::string name = kFrontend;
    return name;
}

const Value& NodeContext::input(std::size_t i) const {
    static const Value none;
    if (!has_input(i)) return none;
    Slot& s = *inputs_[i];
    if (!s.value.var && s.known) {  // a known value used as an operand: a constant of the graph
        const Order o = positional_order(s.known->shape.size());
        s.value.var = graph_.add_constant(graph_.unique_name(node_.input(static_cast<int>(i))), o, s.known->shape,
                                          std::make_shared<const std::vector<float>>(s.known->floats()));
        s.value.logical = o;
    }
    if (!s.value.var) fail_format("input " + std::to_string(i) + " has no value");
    return s.value;
}

const HostTensor* NodeContext::known(std::size_t i) const { return has_input(i) ? inputs_[i]->known.get() : nullptr; }

std::vector<std::int64_t> NodeContext::known_ints(std::size_t i, const std::string& what) const {
    return known_tensor(i, what).ints(where() + ": input '" + node_.input(static_cast<int>(i)) + "' (" + what + ")");
}

std::vector<SymInt> NodeContext::known_sym_ints(std::size_t i, const std::string& what) const {
    return known_tensor(i, what).sym_ints(where() + ": input '" + node_.input(static_cast<int>(i)) + "' (" + what + ")");
}

const HostTensor& NodeContext::known_tensor(std::size_t i, const std::string& what) const {
    const HostTensor* t = known(i);
    if (!t) {
        if (!has_input(i)) fail_format("input " + std::to_string(i) + " (" + what + ") is missing");
        fail_needs_value(i, "input '" + node_.input(static_cast<int>(i)) + "' (" + what +
                                ") is computed when the model runs; graft needs it known when converting (a constant, "
                                "shape arithmetic, or a model input)");
    }
    return *t;
}

void NodeContext::fail_needs_value(std::size_t i, const std::string& message) const {
    if (i < num_inputs()) needed_.push_back(node_.input(static_cast<int>(i)));
    // A node reads its parameters (starts, ends, axes, steps) one after the other: the others it
    // will need are named now, so that one conversion per value finds them all. Input 0 is the
    // data, except where it is the one needed (ConstantOfShape, Range).
    for (std::size_t j = 1; j < num_inputs(); ++j)
        if (j != i && has_input(j) && !known(j)) needed_.push_back(node_.input(static_cast<int>(j)));
    fail_unsupported(message);
}

std::vector<SymInt> NodeContext::dims(std::size_t i) {
    if (const HostTensor* t = known(i)) {
        std::vector<SymInt> out;
        for (auto d : t->shape) out.push_back({d, 0});
        return out;
    }
    return batch_.dims(input(i), where() + ": input '" + node_.input(static_cast<int>(i)) + "'");
}

void NodeContext::set_outputs(std::vector<Value> outputs) {
    if (outputs.size() > num_outputs())
        fail_format("the converter set " + std::to_string(outputs.size()) + " outputs, the node has " + std::to_string(num_outputs()));
    for (std::size_t k = 0; k < outputs.size(); ++k) set_output(k, outputs[k].var, outputs[k].logical);
}

void NodeContext::set_output(std::size_t k, Variable* v, const Order& logical, bool integer) {
    if (k >= num_outputs()) fail_format("the converter set output " + std::to_string(k) + ", the node has " + std::to_string(num_outputs()));
    outputs_[k] = Slot{Value{v, logical}, nullptr, integer};
    set_[k] = true;
}

void NodeContext::set_known_output(std::size_t k, HostTensor t) {
    if (k >= num_outputs()) fail_format("the converter set output " + std::to_string(k) + ", the node has " + std::to_string(num_outputs()));
    const bool integer = t.kind != HostTensor::Kind::floating;
    outputs_[k] = Slot{Value{}, std::make_shared<const HostTensor>(std::move(t)), integer};
    set_[k] = true;
}

const WeightArray& NodeContext::weight(std::size_t i) const {
    fail_format("has no weight " + std::to_string(i) + " (ONNX nodes read constants as inputs)");
}

std::optional<Shape> NodeContext::declared_shape(std::size_t k) const {
    if (!wants_output(k)) return std::nullopt;
    const std::string& name = node_.output(static_cast<int>(k));
    const auto& g = file_.proto.graph();
    auto shape_of = [](const ::onnx::ValueInfoProto& vi) -> std::optional<Shape> {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return std::nullopt;
        Shape s;
        for (const auto& d : vi.type().tensor_type().shape().dim()) s.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : kDynamic);
        return s;
    };
    for (const auto& vi : g.output())
        if (vi.name() == name) return shape_of(vi);
    for (const auto& vi : g.value_info())
        if (vi.name() == name) return shape_of(vi);
    return std::nullopt;
}

std::shared_ptr<const HostTensor> NodeContext::tensor_attribute(const std::string& name) const {
    for (const auto& a : node_.attribute())
        if (a.name() == name) {
            if (a.type() != ::onnx::AttributeProto::TENSOR) fail_format("attribute '" + name + "' is not a tensor");
            return std::make_shared<const HostTensor>(read_tensor(a.t(), file_, where() + ": attribute '" + name + "'"));
        }
    return nullptr;
}

std::vector<Slot> NodeContext::take_outputs() {
    for (std::size_t k = 0; k < num_outputs(); ++k)
        if (wants_output(k) && !set_[k]) fail_format("the converter did not set output " + std::to_string(k) + " ('" + node_.output(static_cast<int>(k)) + "')");
    return std::move(outputs_);
}

}  // namespace graft::onnx
