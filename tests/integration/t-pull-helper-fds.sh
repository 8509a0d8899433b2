#!/bin/bash
# t-pull-helper-fds.sh: the pull helper (rootlessrt-pull, here a stand-in named by
# ROOTLESSRT_PULL_HELPER) gets stdio, its error pipe on fd 3 and its ready pipe on fd 4, and no
# other descriptor of the runtime's: before, the copies made to move the pipes to 3 and 4 stayed
# open in it (fds 10 and 11, not close-on-exec).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store
helper=$T_WORK/fake-pull
cat >"$helper" <<'PYEOF'
#!/usr/bin/python3
import os
listed = [int(f) for f in os.listdir("/proc/self/fd")]
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
fds = sorted(fd for fd in listed if is_open(fd))
with open(os.environ["RRT_FDS_OUT"], "w") as f:
    f.write(" ".join(map(str, fds)))
os.write(3, b"the stand-in helper stops here")
os._exit(1)
PYEOF
chmod 0755 "$helper"

run env ROOTLESSRT_PULL_HELPER="$helper" RRT_FDS_OUT="$T_WORK/fds" \
  "$RRT" --root "$RRT_ROOT" pull --storage "$STORE" docker://127.0.0.1:1/rrt/none:latest
is "$rc" 1 "pull: the helper's failure is the pull's (exit 1)"
like "$err" "the stand-in helper stops here" "pull: the helper's error pipe (fd 3) reaches the user"
is "$(cat "$T_WORK/fds" 2>/dev/null)" "0 1 2 3 4" \
  "pull: the helper holds stdio, fd 3 and fd 4 only, no copy of the runtime's pipes"
done_testing
