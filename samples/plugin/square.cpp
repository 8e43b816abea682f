// A complete graft plugin: the Keras custom layer `Square` (y = x * x, no weights) as a new op
// type with its schema, its native kernel and its converter handler.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <graft/backend/native_kernel.hpp>
#include <graft/frontend/layer.hpp>
#include <graft/plugin.hpp>

namespace {

// 1. The op type's schema: what its outputs are, given its inputs and attributes.
graft::OpSchema square_schema() {
    graft::OpSchema s;
    s.type = "Square";
    s.inputs = {"x"};
    s.infer = graft::infer_like_x;  // y: x's order and shape (write a function of the op otherwise)
    s.inplace = true;                // elementwise: y may overwrite x
    s.doc = "y = x * x (sample plugin)";
    return s;
}

// 2. Its native generator: called once per compile, returns a kernel bound to fixed slots.
std::unique_ptr<graft::native::Kernel> build_square(graft::native::BuildContext& b) {
    const auto n = b.op().input("x")->numel();
    const auto x = b.in("x"), y = b.out("y");
    return graft::native::make_kernel([=](const graft::native::RunContext& c) {
        const float* in = c.at(x);
        float* out = c.at(y);
        for (std::int64_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
    });
}

// 3. The converter handler: one Keras layer call -> IR operators.
void convert_square(graft::LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    ctx.expect_weights(0);
    const graft::Value& x = ctx.input(0);
    graft::Operator* op = ctx.op("Square", {{"x", x.var}});
    ctx.set_outputs({graft::Value{op->output("y"), x.logical}});
}

void register_square(graft::Registry& r) {
    r.add_op(square_schema());
    r.add_generator<graft::native::Backend>("Square", build_square);
    r.add_converter("keras", "Square", convert_square);
}

}  // namespace

// 4. The one exported entry point: name, version, registration function.
GRAFT_PLUGIN("square", "1.0.0", register_square)
