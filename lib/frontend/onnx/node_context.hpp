// The ONNX frontend's LayerContext: one node, with its attributes as a Config, its inputs as
// Values and, for graft's own converters, what is known of them while converting (initializers,
// Constant outputs and shape arithmetic computed from static shapes: HostTensors).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/dynamic_batch.hpp"
#include "frontend/onnx/model_proto.hpp"
#include "graft/frontend/layer.hpp"

namespace graft::onnx {

/// The logical order graft gives an ONNX tensor of this rank: positional, channels first
/// (C, NC, NCT, NCHW, NCDHW; N, C, A2, A3, ... beyond rank 5).
Order positional_order(std::size_t rank);

/// One ONNX value while converting.
struct Slot {
    /// The IR value; null var while the value is only known (a constant not used by an op yet).
    Value value;
    /// The value's elements when they are known now, else null.
    std::shared_ptr<const HostTensor> known;
    /// Its ONNX element type was an integer or bool type (the IR holds it as float32 values).
    bool integer = false;
};

class NodeContext final : public LayerContext {
public:
    /// Node `node` of `file`, called `name` (its own name, or op type and index), reading `inputs`
    /// (null for an omitted optional input); `batch` follows the model's dynamic batch, if any.
    NodeContext(const ModelFile& file, const ::onnx::NodeProto& node, std::string name, std::int64_t opset,
                std::vector<Slot*> inputs, Graph& g, const Registry& registry, DynamicBatch& batch);

    // ---- LayerContext --------------------------------------------------------------------
    const std::string& frontend() const override;
    const std::string& file() const override { return file_.path; }
    const std::string& layer_name() const override { return name_; }
    const std::string& class_name() const override { return class_; }
    const std::string& framework_version() const override { return producer_; }
    std::int64_t opset() const override { return opset_; }
    const Config& config() const override { return config_; }
    std::size_t num_inputs() const override { return inputs_.size(); }
    /// Input `i` as an IR value (a known value becomes a constant on first use); an empty Value
    /// (null var) for an omitted optional input.
    const Value& input(std::size_t i) const override;
    void set_outputs(std::vector<Value> outputs) override;
    std::size_t num_weights() const override { return 0; }
    const WeightArray& weight(std::size_t i) const override;
    Graph& graph() override { return graph_; }
    const Registry& registry() const override { return registry_; }

    // ---- what graft's own converters use besides ----------------------------------------
    const ::onnx::NodeProto& node() const noexcept { return node_; }
    /// Input `i` is given (not omitted, not past the end).
    bool has_input(std::size_t i) const { return i < inputs_.size() && inputs_[i]; }
    /// The elements of input `i` if they are known now, else null.
    const HostTensor* known(std::size_t i) const;
    /// Input `i`'s elements as integers (shape, axes, pads ...); UnsupportedError if they are
    /// computed only when the model runs, FormatError naming `what` if they are not integers.
    std::vector<std::int64_t> known_ints(std::size_t i, const std::string& what) const;
    /// The same, its elements possibly depending on the batch size.
    std::vector<SymInt> known_sym_ints(std::size_t i, const std::string& what) const;
    /// Input `i`'s dimensions; those of a runtime value that depend on a dynamic batch as
    /// multiples of it (UnsupportedError when graft cannot tell how).
    std::vector<SymInt> dims(std::size_t i);
    /// The dynamic batch of the model, as far as converting can know it.
    DynamicBatch& batch() { return batch_; }
    /// Input `i`'s ONNX element type is an integer or bool type.
    bool is_integer(std::size_t i) const { return has_input(i) && inputs_[i]->integer; }
    /// The node's number of outputs (omitted trailing ones included).
    std::size_t num_outputs() const { return static_cast<std::size_t>(node_.output_size()); }
    /// Output `k` is used (its name is not empty).
    bool wants_output(std::size_t k) const { return k < num_outputs() && !node_.output(static_cast<int>(k)).empty(); }
    /// Sets output `k` to a value known now (shape arithmetic, constants).
    void set_known_output(std::size_t k, HostTensor t);
    /// Sets output `k` to an IR value (logical order as given).
    void set_output(std::size_t k, Variable* v, const Order& logical, bool integer = false);
    /// The shape the model declares for output `k` (a graph output or a value_info entry; kDynamic
    /// for a symbolic or unknown dimension), if it declares one.
    std::optional<Shape> declared_shape(std::size_t k) const;
    /// Tensor attribute `name` (Constant's value, ConstantOfShape's value); null if absent.
    std::shared_ptr<const HostTensor> tensor_attribute(const std::string& name) const;
    /// UnsupportedError (`message`) for a node that needs input `i`'s values while converting and
    /// finds them computed when the model runs. The input is remembered (needed_values()): when it
    /// comes from model inputs, graft::load compiles the model per value of those. The node's
    /// other inputs past the first that are not known are remembered too (its other parameters).
    [[noreturn]] void fail_needs_value(std::size_t i, const std::string& message) const;
    /// What decline() throws.
    struct Declined {};
    /// A fused node's converter (patterns.hpp) finds the node is not what its pattern looked
    /// like: the converter converts the nodes it replaced instead. Throw before adding any op.
    [[noreturn]] static void decline() { throw Declined{}; }
    /// The names of the inputs fail_needs_value reported.
    const std::vector<std::string>& needed_values() const noexcept { return needed_; }
    /// The slots of the outputs, moved out; FormatError if the converter set none of them.
    std::vector<Slot> take_outputs();

private:
    class Attributes;
    /// Input `i`'s known elements; UnsupportedError naming `what` if they are computed when the
    /// model runs.
    const HostTensor& known_tensor(std::size_t i, const std::string& what) const;

    const ModelFile& file_;
    const ::onnx::NodeProto& node_;
    std::string name_, class_, producer_;
    std::int64_t opset_;
    std::shared_ptr<Attributes> attrs_;
    Config config_;
    std::vector<Slot*> inputs_;
    std::vector<Slot> outputs_;
    std::vector<bool> set_;
    Graph& graph_;
    const Registry& registry_;
    DynamicBatch& batch_;
    mutable std::vector<std::string> needed_;
};

}  // namespace graft::onnx
