#!/bin/sh
# say-hook.sh WORD [LINES]: an OCI hook for t-hooks.sh that talks: "WORD-out" on stdout,
# "WORD-err" on stderr, and with LINES > 0 that many filler lines on stderr first, then exits 0
# (or with LINES > 0, 1: the error must carry the tail of stderr, not its head).
word=$1 lines=${2:-0}
cat >/dev/null
i=0
while [ "$i" -lt "$lines" ]; do
  echo "filler line $i of $word" >&2
  i=$((i + 1))
done
echo "$word-out"
echo "$word-err" >&2
[ "$lines" -gt 0 ] && exit 1
exit 0
