#!/bin/bash
# smoke.sh [--long SECONDS] FUZZ_BUILD REPLAY_BUILD [NAME...]: the fuzz harnesses
# (tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/, a libFuzzer dictionary in
# tests/fuzz/fuzz_NAME.dict if there is one).
# Without --long (make check): each harness's replay build (REPLAY_BUILD/fuzz/fuzz_NAME, the normal
# compiler) runs every input of its corpus once, then its libFuzzer build (FUZZ_BUILD/fuzz_NAME)
# fuzzes for RRT_FUZZ_SMOKE_SECONDS (3) from that corpus, new inputs going to a scratch directory;
# the libFuzzer part is skipped, with the reason, where clang or libFuzzer is missing or
# RRT_FUZZ_SMOKE=0 (RRT_FUZZ_SMOKE_WHY says why). With --long (make fuzz): SECONDS of libFuzzer per harness, its new inputs kept
# in FUZZ_BUILD/corpus/NAME and what it finds in FUZZ_BUILD/crash/NAME/. libFuzzer's output goes
# to FUZZ_BUILD/log/NAME.log.
# Ends with "fuzz: N passed, N failed, N skipped"; exit 1 on any failure.
set -u

long=""
if [ "${1:-}" = --long ]; then
  long=$2
  shift 2
fi
[ $# -ge 2 ] || {
  echo "usage: smoke.sh [--long SECONDS] FUZZ_BUILD REPLAY_BUILD [NAME...]" >&2
  exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fuzz_build=$1
replay_build=$2
shift 2
smoke_seconds=${RRT_FUZZ_SMOKE_SECONDS:-3}

names=()
if [ $# -gt 0 ]; then
  for n in "$@"; do names+=("${n#fuzz_}"); done
else
  for f in "$here"/fuzz_*.c; do
    n=$(basename "$f" .c)
    names+=("${n#fuzz_}")
  done
fi

pass=0
fail=0
skip=0
ok() {
  echo "ok - $*"
  pass=$((pass + 1))
}
not_ok() {
  echo "not ok - $*"
  fail=$((fail + 1))
}
skipped() {
  echo "ok # SKIP $*"
  skip=$((skip + 1))
}

why_no_libfuzzer=""
if [ "${RRT_FUZZ_SMOKE:-1}" = 0 ]; then
  why_no_libfuzzer="RRT_FUZZ_SMOKE=0${RRT_FUZZ_SMOKE_WHY:+: $RRT_FUZZ_SMOKE_WHY}"
elif ! why_no_libfuzzer=$(sh "$here/have-libfuzzer.sh"); then
  :
else
  why_no_libfuzzer=""
fi
[ -z "$long" ] || [ -z "$why_no_libfuzzer" ] || {
  echo "fuzz: cannot fuzz: $why_no_libfuzzer" >&2
  exit 1
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# libfuzz NAME SECONDS CORPUS_OUT CRASH_DIR: the libFuzzer build for SECONDS from the seeds.
libfuzz() {
  local name=$1 seconds=$2 out=$3 crash=$4 bin=$fuzz_build/fuzz_$1 log=$fuzz_build/log/$1.log
  local seeds=$here/corpus/$1
  mkdir -p "$out" "$crash" "$fuzz_build/log"
  [ -d "$seeds" ] || seeds=""
  local dict=$here/fuzz_$1.dict
  [ -e "$dict" ] || dict=""
  # -timeout: an input that takes a minute is a finding even on a busy host; the sanitizers'
  # reports and libFuzzer's statistics go to the log, shown on a failure.
  "$bin" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
    ${dict:+-dict="$dict"} -artifact_prefix="$crash/" "$out" ${seeds:+"$seeds"} >"$log" 2>&1
  local rc=$?
  local cov
  cov=$(grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss)' "$log" |
    tr -s ' \t' ' ' | tr '\n' ' ')
  if [ "$rc" -eq 0 ]; then
    ok "fuzz_$name: ${seconds}s of libFuzzer: $cov"
  else
    tail -n 40 "$log" | sed "s/^/# fuzz_$name: /"
    not_ok "fuzz_$name: libFuzzer exited $rc; the input is in $crash/, the whole report in $log"
  fi
}

for name in "${names[@]}"; do
  if [ ! -e "$here/fuzz_$name.c" ]; then
    not_ok "fuzz_$name: no tests/fuzz/fuzz_$name.c"
    continue
  fi
  if [ -n "$long" ]; then
    libfuzz "$name" "$long" "$fuzz_build/corpus/$name" "$fuzz_build/crash/$name"
    continue
  fi
  # The corpus once, with the normal compiler's build.
  bin=$replay_build/fuzz/fuzz_$name
  if [ ! -x "$bin" ]; then
    not_ok "fuzz_$name: $bin is not built (make fuzz-replay)"
  elif [ ! -d "$here/corpus/$name" ]; then
    not_ok "fuzz_$name: no seed corpus tests/fuzz/corpus/$name/"
  else
    log=$scratch/$name.replay
    if "$bin" "$here/corpus/$name" >"$log" 2>&1; then
      ok "fuzz_$name: corpus replayed ($(sed -n 's/^replay: \([0-9]* inputs\)$/\1/p' "$log"))"
    else
      tail -n 20 "$log" | sed "s/^/# fuzz_$name: /"
      not_ok "fuzz_$name: the corpus replay failed (the last input named above)"
    fi
  fi
  # A few seconds of fuzzing.
  if [ -n "$why_no_libfuzzer" ]; then
    skipped "fuzz_$name: no libFuzzer run: $why_no_libfuzzer"
  elif [ ! -x "$fuzz_build/fuzz_$name" ]; then
    not_ok "fuzz_$name: $fuzz_build/fuzz_$name is not built (make fuzz-build)"
  else
    libfuzz "$name" "$smoke_seconds" "$scratch/corpus-$name" "$fuzz_build/crash/$name"
  fi
done

echo "fuzz: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
