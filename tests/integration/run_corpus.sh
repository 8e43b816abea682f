#!/usr/bin/env bash
# Runs the graft CLI over the shared Keras corpus with shared/tools/check_cases.py.
#
#   run_corpus.sh check  GRAFT PLUGIN_DIR SHARED_DIR EXCLUDED    every case except those listed in the
#                                                                file EXCLUDED; fails if one fails
#   run_corpus.sh report GRAFT PLUGIN_DIR SHARED_DIR             every case; prints the count, exits 0
#
# Exits 77 (CTest's SKIP_RETURN_CODE) when the corpus is absent.
set -euo pipefail

mode=$1 graft=$2 plugin_dir=$3 shared=$4
corpus=$shared/corpus/keras-real
if [[ ! -d $corpus ]]; then
  echo "SKIP: ../shared/corpus/keras-real not found (the shared corpus sits beside the repo in CI)"
  exit 77
fi
check=(/usr/bin/python3 "$shared/tools/check_cases.py" "$graft")
options=(--plugin-dir "$plugin_dir" --data "$corpus")  # after the cases: argparse takes positionals in one run

case $mode in
  check)
    mapfile -t excluded < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$5")
    cases=()
    for dir in "$corpus"/*/; do
      name=$(basename "$dir")
      [[ -f $dir/manifest.json ]] || continue
      skip=0
      for e in "${excluded[@]}"; do [[ $e == "$name" ]] && skip=1; done
      (( skip )) || cases+=("$name")
    done
    for e in "${excluded[@]}"; do
      [[ -d $corpus/$e ]] || { echo "error: $5 excludes '$e', which is not a case of $corpus" >&2; exit 1; }
    done
    if (( ${#cases[@]} == 0 )); then
      echo "error: no case left to check in $corpus (excluded: ${#excluded[@]})" >&2
      exit 1
    fi
    echo "corpus: checking ${#cases[@]} cases (${#excluded[@]} excluded in $5)"
    exec "${check[@]}" "${cases[@]}" "${options[@]}"
    ;;
  report)
    "${check[@]}" "${options[@]}" || true
    ;;
  *)
    echo "usage: $0 check|report GRAFT PLUGIN_DIR SHARED_DIR [CASE_LIST]" >&2
    exit 2
    ;;
esac
