#!/bin/sh
# mkman.sh RUNTIME SOURCE: prints the roff man page: SOURCE with each "@HELP VERB@" line replaced
# by what `RUNTIME help VERB` prints (its usage as the verb's synopsis, its one-line summary), so
# that `rootlessrt help VERB` and the man page say the same; @VERSION@ becomes the version.
set -eu
[ $# -eq 2 ] || {
  echo "usage: mkman.sh RUNTIME SOURCE" >&2
  exit 2
}
rt=$1
src=$2
version=$("$rt" --version | sed -n 's/^rootlessrt version //p')

# roff: backslashes, then hyphens as \-, and a protected line start.
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"; }

help_block() { # help_block VERB
  out=$("$rt" help "$1") || {
    echo "mkman.sh: $rt help $1 failed" >&2
    exit 1
  }
  echo ".nf"
  # The usage lines (up to the blank line), "Usage: rootlessrt [global flags]" made bold.
  printf '%s\n' "$out" | sed -n '1,/^$/p' | sed '/^$/d' | roff |
    sed '1s/^Usage: rootlessrt/\\fBrootlessrt\\fR/'
  echo ".fi"
  echo ".PP"
  printf '%s\n' "$out" | sed '1,/^$/d' | roff
}

while IFS= read -r line; do
  case $line in
    @HELP\ *@)
      verb=${line#@HELP }
      help_block "${verb%@}"
      ;;
    *) printf '%s\n' "$line" | sed "s/@VERSION@/$version/g" ;;
  esac
done <"$src"
