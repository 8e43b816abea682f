// graft/verify.hpp - self-check: does the converted model reproduce a known input/output pair?
//
// As frugally-deep does at load time, a user keeps one reference pair computed by Keras itself
// (model.predict on a saved input) next to the model and asks graft to reproduce it:
//
//   graft::VerifyReport r = graft::verify(model, {{"input_1", x}}, {{"dense_2", y_keras}});
//   if (!r.ok) throw std::runtime_error(r.str());
//
// The graft tool does the same with .npy files: `graft verify MODEL --manifest ref/manifest.json`
// or `--input NAME=x.npy --expect NAME=y.npy`, and `graft run MODEL --verify ref/manifest.json ...`
// refuses to run a model that fails its check.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "graft/export.hpp"
#include "graft/graft.hpp"

namespace graft {

/// How one model output compares with its expected value.
struct OutputCheck {
    std::string name;
    Shape shape;           ///< what graft computed (empty if the output is missing)
    Shape expected_shape;
    double max_abs_err = 0;
    std::size_t num_off = 0;    ///< values outside atol + rtol * |expected| (NaN counts)
    std::size_t first_off = 0;  ///< flat index of the first of them
    bool ok = false;
    std::string problem;  ///< "" or why the output could not be compared (missing, shape)
};

struct GRAFT_API VerifyReport {
    bool ok = true;
    double atol = 0, rtol = 0;
    std::vector<OutputCheck> outputs;  ///< one per expected output, in name order
    /// One line per output, e.g. "dense_2 [1, 3]: ok, max abs err 2.4e-07" or "... 3 of 3 values off ...".
    std::string str() const;
};

/// Runs `model` on `inputs` and compares every output named in `expected` (numpy.allclose:
/// |got - expected| <= atol + rtol * |expected|, NaN never matches). An expected name the model
/// does not output, or a shape that differs, fails the check. Errors while running propagate.
GRAFT_API VerifyReport verify(const Model& model, const std::map<std::string, Tensor>& inputs,
                    const std::map<std::string, Tensor>& expected, double atol = 1e-5, double rtol = 1e-5);

}  // namespace graft
