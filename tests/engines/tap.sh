# shellcheck shell=bash
# tap.sh: sourced by the engine suites: TAP lines and their counts. summary NAME prints the line
# run-all.sh reads, "NAME: N passed, N failed, N skipped".
N_PASS=0 N_FAIL=0 N_SKIP=0
pass() { N_PASS=$((N_PASS + 1)) && echo "ok - $1"; }
fail() { # fail NAME [DIAG...]
  N_FAIL=$((N_FAIL + 1))
  echo "not ok - $1"
  shift
  local l
  for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}
skip() { # skip WHY [N]: N checks (1) skipped for one reason
  local i
  for ((i = 0; i < ${2:-1}; i++)); do
    N_SKIP=$((N_SKIP + 1)) && echo "ok # SKIP $1"
  done
}
summary() { echo "$1: $N_PASS passed, $N_FAIL failed, $N_SKIP skipped"; }
skip_suite() { # skip_suite NAME WHY [N]: the whole suite skipped (N checks, 1 by default), exit 0
  echo "$1: skipped ($2)"
  N_SKIP=${3:-1}
  summary "$1"
  exit 0
}
add_summary() { # add_summary LINE: adds the counts of another run's summary line to ours
  local n
  n=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$1") && N_PASS=$((N_PASS + n))
  n=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$1") && N_FAIL=$((N_FAIL + n))
  n=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$1") && N_SKIP=$((N_SKIP + n))
}
