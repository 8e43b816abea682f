#include "graft/verify.hpp"

#include <cmath>
#include <sstream>

namespace graft {

std::string VerifyReport::str() const {
    std::ostringstream s;
    s.precision(3);
    if (outputs.empty()) return "no expected output given: nothing was checked";
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const auto& o = outputs[i];
        if (i) s << "\n";
        s << o.name;
        if (!o.problem.empty()) {
            s << ": " << o.problem;
            continue;
        }
        s << " " << shape_str(o.shape) << ": ";
        if (o.ok) s << "ok, max abs err " << o.max_abs_err;
        else
            s << o.num_off << " of " << numel(o.shape) << " values off (first at flat index " << o.first_off << "), max abs err "
              << o.max_abs_err << " (atol " << atol << ", rtol " << rtol << ")";
    }
    return s.str();
}

VerifyReport verify(const Model& model, const std::map<std::string, Tensor>& inputs,
                    const std::map<std::string, Tensor>& expected, double atol, double rtol) {
    VerifyReport r;
    r.atol = atol;
    r.rtol = rtol;
    const auto outputs = model.run(inputs);
    for (const auto& [name, want] : expected) {
        OutputCheck c;
        c.name = name;
        c.expected_shape = want.shape();
        auto it = outputs.find(name);
        if (it == outputs.end()) {
            std::string names;
            for (const auto& [n, t] : outputs) names += (names.empty() ? "" : ", ") + n;
            c.problem = "the model has no output of this name (outputs: " + names + ")";
        } else if (it->second.shape() != want.shape()) {
            c.shape = it->second.shape();
            c.problem = "shape " + shape_str(c.shape) + ", expected " + shape_str(want.shape());
        } else {
            c.shape = it->second.shape();
            for (std::size_t i = 0; i < want.size(); ++i) {  // any dtypes, compared as values
                const double g = it->second.at_double(i), e = want.at_double(i);
                const double d = std::fabs(g - e);
                const bool bad = !(d <= atol + rtol * std::fabs(e));  // NaN: bad
                if (std::isnan(d) || d > c.max_abs_err) c.max_abs_err = std::isnan(d) ? NAN : std::max(c.max_abs_err, d);
                if (bad && c.num_off++ == 0) c.first_off = i;
            }
            c.ok = c.num_off == 0;
        }
        r.ok = r.ok && c.ok;
        r.outputs.push_back(std::move(c));
    }
    if (expected.empty()) r.ok = false;  // nothing checked is not a pass
    return r;
}

}  // namespace graft
