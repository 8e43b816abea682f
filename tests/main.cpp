// The Catch2 main of graft_tests; the tests live in unit/ and integration/.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
