// Tests for graft::Config (include/graft/frontend/layer.hpp) over the Keras frontend's RapidJSON
// source (lib/frontend/keras/json_config.cpp): typed access, kinds, views and their messages.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include "frontend/keras/json_config.hpp"
#include "graft/error.hpp"

namespace graft_test_config {

using graft::Config;
using graft::keras::json_config;
using Catch::Matchers::Equals;

namespace {

rapidjson::Document parse(const char* json) {
    rapidjson::Document d;
    d.Parse(json);
    REQUIRE_FALSE(d.HasParseError());
    return d;
}

}  // namespace

TEST_CASE("Config reads members by key, with the kinds Keras writes") {
    const auto d = parse(R"({"units": 8, "rate": 0.5, "three": 3.0, "act": "relu", "bias": true, "axis": null,
                             "size": [2, null, 4], "pad": [[1, 2], [3, 4]], "inner": {"n": 1}})");
    const Config c = json_config(&d, "m.h5: layer 'd' (Dense)");

    CHECK(c.kind() == Config::Kind::object);
    CHECK(c.kind("units") == Config::Kind::integer);
    CHECK(c.kind("rate") == Config::Kind::number);
    CHECK(c.kind("nope") == Config::Kind::missing);
    CHECK(c.has("units"));
    CHECK_FALSE(c.has("axis"));  // null is absent for has()
    CHECK(c.is_null("axis"));
    CHECK_FALSE(c.is_null("nope"));
    CHECK((c.is_number("units") && c.is_number("rate") && !c.is_number("act")));
    CHECK((c.is_string("act") && c.is_bool("bias") && c.is_list("size") && c.is_object("inner")));

    CHECK(c.get_int("units") == 8);
    CHECK(c.get_int("three") == 3);  // an integral float is an integer
    CHECK(c.get_float("units") == 8.0);
    CHECK(c.get_string("act") == "relu");
    CHECK(c.get_bool("bias"));
    CHECK(c.get_int("axis", 7) == 7);
    CHECK(c.get_ints("size") == std::vector<std::int64_t>{2, graft::kDynamic, 4});
    CHECK(c.get_ints("units", 2) == std::vector<std::int64_t>{8, 8});
    CHECK(c.first_of({"filters", "units"}) == "units");
    CHECK(c.get("inner").get_int("n") == 1);

    const Config pad = c.get("pad");
    REQUIRE(pad.size() == 2);
    CHECK(pad.at(1).size() == 2);
    CHECK(pad.at(1).at(0).as_int() == 3);
    CHECK(pad.at(0).at(1).as_float() == 2.0);
    CHECK(c.get("act").size() == 0);  // not a list
}

TEST_CASE("Config errors name the layer and the key") {
    const auto d = parse(R"({"rate": 0.5, "act": "relu", "size": [1, "x"], "pad": [[1, 2]]})");
    const Config c = json_config(&d, "m.h5: layer 'd' (Dense)");
    CHECK_THROWS_WITH(c.get_int("rate"), Equals("m.h5: layer 'd' (Dense): config 'rate' should be an integer"));
    CHECK_THROWS_WITH(c.get_int("units"), Equals("m.h5: layer 'd' (Dense): config has no 'units'"));
    CHECK_THROWS_WITH(c.get_bool("act"), Equals("m.h5: layer 'd' (Dense): config 'act' should be true or false"));
    CHECK_THROWS_WITH(c.get_ints("size"), Equals("m.h5: layer 'd' (Dense): config 'size' should hold integers"));
    CHECK_THROWS_WITH(c.get_ints("act"),
                      Equals("m.h5: layer 'd' (Dense): config 'act' should be an integer or a list of integers"));
    CHECK_THROWS_WITH(c.get("pad").at(0).at(5),
                      Equals("m.h5: layer 'd' (Dense): config 'pad[0]' has 2 entries, asked for entry 5"));
    CHECK_THROWS_WITH(c.get("act").as_int(), Equals("m.h5: layer 'd' (Dense): config 'act' should be an integer"));
    CHECK_THROWS_AS(c.get_string("rate"), graft::FormatError);
}

TEST_CASE("An empty Config has nothing and says where") {
    const Config none = json_config(nullptr, "m.h5: layer 'a' (Attention)");
    CHECK(none.kind() == Config::Kind::missing);
    CHECK_FALSE(none.has("mask"));
    CHECK(none.kind("mask") == Config::Kind::missing);
    CHECK(none.size() == 0);
    CHECK(none.get_bool("causal", true));
    CHECK_THROWS_WITH(none.get_int("n"), Equals("m.h5: layer 'a' (Attention): config has no 'n'"));
    CHECK_FALSE(Config().has("x"));

    // json_value gives back what json_config was given
    const auto d = parse(R"({"n": 1})");
    CHECK(graft::keras::json_value(json_config(&d, "w")) == &d);
    CHECK(graft::keras::json_value(none) == nullptr);
}

}  // namespace graft_test_config
