#!/bin/sh
# have-libfuzzer.sh: exit 0 when clang and its libFuzzer runtime are installed (what `make fuzz`
# needs); otherwise print why not and exit 1. `contrib/install-deps.sh fuzz` installs both.
command -v clang >/dev/null 2>&1 || {
  echo "clang is not installed (contrib/install-deps.sh fuzz installs it)"
  exit 1
}
rt=$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-$(uname -m).a
[ -e "$rt" ] || {
  echo "clang's libFuzzer runtime ($rt) is not installed (contrib/install-deps.sh fuzz installs libclang-rt-dev)"
  exit 1
}
exit 0
