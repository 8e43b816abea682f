// Hostile model files (issue 17; tests/fixtures/bad/, made by tests/fixtures/make_bad.py): absurd
// integers in layer configs that once wrapped int64 shape arithmetic and overflowed heap buffers,
// JSON nested 100,000 deep, weights whose declared size is a bomb, LoadOptions::limits lowered,
// and control characters in names. Each must give one typed error naming the file, the layer and
// the field, from the library and from the CLI (one "graft: error:" line, an exit rather than a
// crash), with names from the file escaped.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graft/graft.hpp"
#include "graft/printable.hpp"
#include "support.hpp"

namespace graft_test_hostile_files {

using namespace graft_test;

namespace {

/// No byte of `s` is a control character other than a line feed.
bool no_controls(const std::string& s) {
    for (unsigned char c : s)
        if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
    return true;
}

struct Hostile {
    std::string file;
    std::vector<std::string> facts;  // in the message, besides the file name
};

}  // namespace

TEST_CASE("hostile configs: absurd sizes give a ShapeError naming the layer and the field", "[errors][hostile]") {
    const std::vector<Hostile> cases = {
        {"repeat_vector_huge.h5", {"repeat_vector_3", "'n'", "576460752303423489", "2^31"}},
        {"repeat_vector_2p59.h5", {"repeat_vector_3", "'n'", "576460752303423488", "2^31"}},
        {"upsampling1d_huge.h5", {"up_sampling1d_3", "'size'", "576460752303423489", "2^31"}},
        {"conv1d_dilation_huge.h5", {"conv1d_dil2_same_tanh", "'dilation_rate'", "4611686018427387904", "2^31"}},
        {"conv3d_transpose_strides_huge.h5", {"convt3d_s2_same", "'strides'", "1152921504606846977", "2^31"}},
        {"keras1_lstm_output_dim_huge.h5", {"lstm_1", "output_dim", "65537", "2^31"}},
    };
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.file) {
            const auto path = bad_fixture(c.file);
            auto facts = c.facts;
            facts.push_back(c.file);
            try {
                graft::load(path);
                FAIL("loaded " << path);
            } catch (const graft::ShapeError& e) {
                for (const auto& f : facts) CHECK_THAT(e.what(), Catch::Contains(f));
            }
            check_cli_error(run_cli({"inspect", path}), facts);
        }
    }
}

TEST_CASE("hostile files: limits refuse what a file asks for before it is allocated", "[errors][hostile][limits]") {
    SECTION("JSON nested 100,000 deep") {
        const auto path = bad_fixture("json_deep.h5");
        REQUIRE_THROWS_AS(graft::load(path), graft::FormatError);
        REQUIRE_THROWS_WITH(graft::load(path), Catch::Contains("nested deeper than 256"));
        check_cli_error(run_cli({"inspect", path}), {"json_deep.h5", "nested deeper than 256"});
    }
    SECTION("a 4 GiB kernel declared in a small file: refused from its declared shape") {
        const auto path = bad_fixture("weight_bomb.h5");
        REQUIRE_THROWS_AS(graft::load(path), graft::FormatError);
        REQUIRE_THROWS_WITH(graft::load(path), Catch::Contains("max_total_weight_bytes") && Catch::Contains("before decoding"));
    }
    const std::string dense = fixture("dense_sequential_no_input_layer").string() + "/model.h5";
    SECTION("lowered limits") {
        struct Lowered {
            void (*lower)(graft::Limits&);
            std::string fact;
        };
        const std::vector<Lowered> cases = {
            {[](graft::Limits& l) { l.max_tensor_elements = 20; }, "more than 20 elements"},  // dense_1's kernel is (5, 6)
            {[](graft::Limits& l) { l.max_total_weight_bytes = 100; }, "max_total_weight_bytes"},
            {[](graft::Limits& l) { l.max_graph_nodes = 2; }, "max_graph_nodes"},
            {[](graft::Limits& l) { l.max_file_bytes = 1000; }, "max_file_bytes"},
            {[](graft::Limits& l) { l.max_json_depth = 2; }, "nested deeper than 2"},
        };
        for (const auto& c : cases) {
            graft::LoadOptions o;
            c.lower(o.limits);
            REQUIRE_THROWS_AS(graft::load(dense, o), graft::Error);
            REQUIRE_THROWS_WITH(graft::load(dense, o), Catch::Contains(c.fact));
        }
        REQUIRE_NOTHROW(graft::load(dense));
    }
}

TEST_CASE("printable: control characters and bad UTF-8 are escaped, text is kept", "[errors][hostile][names]") {
    CHECK(graft::printable("dense_1") == "dense_1");
    CHECK(graft::printable("a\x1b[2J\x07\r\x0c\x7f") == "a\\x1b[2J\\x07\\x0d\\x0c\\x7f");
    CHECK(graft::printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82") == "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");
    CHECK(graft::printable("\xc2\x9b") == "\\xc2\\x9b");          // C1 CSI
    CHECK(graft::printable("\xff\xc3") == "\\xff\\xc3");          // not UTF-8, cut off
    CHECK(graft::printable("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
    CHECK(graft::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
    CHECK(graft::printable(std::string("a\0b", 3)) == "a\\x00b");
}

TEST_CASE("hostile names: control characters in layer names are escaped in errors and inspect", "[errors][hostile][names]") {
    SECTION("an error naming the layer and its class") {
        const auto path = bad_fixture("control_chars_unknown.h5");
        try {
            graft::load(path);
            FAIL("loaded " << path);
        } catch (const graft::UnsupportedError& e) {
            CHECK(no_controls(e.what()));
            CHECK_THAT(e.what(), Catch::Contains("dense\\x1b[2J\\x07\\x0d\\x0cevil"));
        }
        const auto r = run_cli({"inspect", path});
        CHECK(no_controls(r.err));
        check_cli_error(r, {"dense\\x1b[2J\\x07\\x0d\\x0cevil", "Evil\\x1b]0;owned\\x07Layer"});
        const auto c = run_cli({"inspect", "--check", path});
        CHECK(no_controls(c.out));
        CHECK_THAT(c.out, Catch::Contains("dense\\x1b[2J\\x07\\x0d\\x0cevil"));
    }
    SECTION("inspect's summary and DOT graph") {
        const auto path = bad_fixture("control_chars_name.h5");
        TempDir tmp;
        const auto dot = (tmp / "g.dot").string();
        const auto r = run_cli({"inspect", path, "--dot", dot});
        INFO("stderr:\n" << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(no_controls(r.out));
        CHECK_THAT(r.out, Catch::Contains("dense\\x1b[2J\\x07\\x0d\\x0cevil"));
        std::ifstream in(dot);
        const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        CHECK(no_controls(text));
    }
}

}  // namespace graft_test_hostile_files
