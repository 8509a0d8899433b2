#!/bin/sh
# run-unit.sh: runs each unit-test binary (TAP) and prints one summary line.
# test_spec reads the OCI schema fixtures the repository carries (tests/spec).
: "${RRT_SPEC_DIR:=$(cd "$(dirname "$0")" && pwd)/spec}"
export RRT_SPEC_DIR
pass=0
fail=0
for t in "$@"; do
  out=$("$t" 2>&1)
  rc=$?
  p=$(printf '%s\n' "$out" | grep -c '^ok ')
  f=$(printf '%s\n' "$out" | grep -c '^not ok ')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    echo "not ok - $t exited with status $rc"
  fi
  printf '%s\n' "$out" | grep -E '^(not ok|#)' | sed "s|^|$(basename "$t"): |"
  pass=$((pass + p))
  fail=$((fail + f))
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
