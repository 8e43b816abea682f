// A plugin whose registration adds an op type and then throws. The load must fail with a
// PluginError naming the file, and leave no ThrowOp behind.
#include <stdexcept>

#include <graft/plugin.hpp>

namespace {

void throws(graft::Registry& r) {
    graft::OpSchema s;
    s.type = "ThrowOp";
    s.infer = [](const graft::Operator&) { return std::vector<std::pair<std::string, graft::TensorType>>{}; };
    r.add_op(std::move(s));
#ifdef THROW_INT
    throw 42;
#else
    throw std::runtime_error("deliberate failure in registration");
#endif
}

}  // namespace

GRAFT_PLUGIN("throws", "1.0.0", throws)
