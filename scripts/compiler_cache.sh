# Sourced by scripts/test.sh and scripts/test_sanitizers.sh: compile through ccache when it is
# installed (scripts/deps.sh installs it) and the caller has not chosen a launcher, with paths
# relative to the checkout so that another clone of graft on the same machine hits the same cache.
# A cold cache costs nothing but the lookups; the tests are the same either way.
if command -v ccache >/dev/null 2>&1 && [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$PWD")}
fi
