#!/bin/bash
# t-docs.sh: the man page and the shell completions against the binary: every verb and flag the
# parser accepts (the hidden `rootlessrt --list-flags [VERB]`, printed from the parser's own
# tables) is described in the verb's section of the man page and offered by the bash, zsh and
# fish completions; the man page renders without warnings and says what `help VERB` says; the
# completions offer container ids, signal names and directories for -b; README.md is a front page
# of at most 250 lines that links every page of docs/.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

MAN_DIR=$(cd "$TESTS_DIR/../man" 2>/dev/null && pwd)
COMP_DIR=$CONTRIB_DIR/completion

# ---------------------------------------------------------------- what the binary accepts

run "$RRT" --list-flags
is "$rc" 0 "--list-flags exits 0"
VERBS=$(awk '$1 == "verb" {print $2}' <<<"$out")
GLOBALS=$(awk '$1 != "verb"' <<<"$out")
like "$(tr '\n' ' ' <<<"$VERBS")" '^create start run .*check checkpoint restore help $' "--list-flags names the verbs"
bad=$(grep -vE '^--[a-z0-9-]+( -[a-zA-Z])? (none|arg|optional)$' <<<"$GLOBALS")
is "$bad" "" "global flags listed as: --long [-s] none|arg"
declare -A FLAGS # verb -> its flags, long and short, one a line
for v in $VERBS; do
  [ "$v" = help ] && continue
  run "$RRT" --list-flags "$v"
  if [ "$rc" -ne 0 ] || [ -z "$out" ]; then
    fail "--list-flags $v" "exit status $rc" "stdout: $out" "stderr: $err"
    continue
  fi
  FLAGS[$v]=$(awk '{print $1; if ($2 ~ /^-[a-zA-Z]$/) print $2}' <<<"$out" | sort -u)
done
pass "--list-flags VERB lists each verb's flags (${#FLAGS[@]} verbs)"
GLOBAL_FLAGS=$(awk '{print $1; if ($2 ~ /^-[a-zA-Z]$/) print $2}' <<<"$GLOBALS" | sort -u)

# ---------------------------------------------------------------- the man page

if [ -z "$MAN_DIR" ] || [ ! -f "$MAN_DIR/rootlessrt.1.in" ]; then
  skip "no man/ beside tests/ (the man page source)" 4
elif ! command -v groff >/dev/null; then
  skip "groff is not installed" 4
else
  page=$T_WORK/rootlessrt.1
  run sh "$MAN_DIR/mkman.sh" "$RRT" "$MAN_DIR/rootlessrt.1.in"
  printf '%s\n' "$out" >"$page"
  is "$rc:$err" "0:" "man/mkman.sh builds the page"
  run groff -ww -man -Tutf8 -z "$page"
  is "$err" "" "groff -ww -man: no warnings"
  if command -v man >/dev/null; then
    run env MANWIDTH=100 man --warnings -l "$page"
    is "$err" "" "man --warnings -l: no warnings"
  else
    skip "man is not installed"
  fi
  text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | col -b | tr -s ' \t\n' '   ')
  miss=""
  for v in $VERBS; do
    [ "$v" = help ] && continue
    h=$("$RRT" help "$v" | sed 's/^Usage: //' | tr -s ' \t\n' '   ' | sed 's/ $//')
    [[ $text == *"$h"* ]] || miss+=" $v"
  done
  is "$miss" "" "the man page says what 'rootlessrt help VERB' says, for every verb"
fi

# section SH|SS NAME: the lines of that section of the man source, up to the next .SS or .SH
section() {
  awk -v want=".$1 $2" '$0 == want {on = 1; next} on && /^\.S[SH] / {exit} on' "$MAN_DIR/rootlessrt.1.in"
}
roff_flag() { sed 's/-/\\\\-/g' <<<"$1"; } # --bundle -> \-\-bundle (as an ERE)

if [ -n "$MAN_DIR" ] && [ -f "$MAN_DIR/rootlessrt.1.in" ]; then
  miss=""
  for v in "${!FLAGS[@]}"; do
    sec=$(section SS "$v")
    [ "$v" = run ] && sec+=$(section SS create)
    for f in ${FLAGS[$v]}; do
      case $f in -h | --help) continue ;; esac # "Every verb also takes -h, --help"
      grep -qE -- "(^|[^a-z\\\\-])$(roff_flag "$f")([^a-z-]|\\\\-|\$)" <<<"$sec" || miss+=" $v:$f"
    done
  done
  is "$miss" "" "the man page describes every flag of every verb in that verb's section (man/rootlessrt.1.in)"
  sec=$(section SH "GLOBAL FLAGS")
  miss=""
  for f in $GLOBAL_FLAGS; do
    grep -qE -- "(^|[^a-z\\\\-])$(roff_flag "$f")([^a-z-]|\$)" <<<"$sec" || miss+=" $f"
  done
  is "$miss" "" "the man page describes every global flag"
  miss=""
  for v in $VERBS; do
    [ "$v" = help ] && continue
    [ -n "$(section SS "$v")" ] || miss+=" $v"
  done
  is "$miss" "" "the man page has a section for every verb"
else
  skip "no man/ beside tests/" 3
fi

# ---------------------------------------------------------------- bash

# bash_complete WORD...: COMPREPLY for the command line WORD... (the last word is completed)
bash_complete() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _rootlessrt; printf "%s\n" "${COMPREPLY[@]}"' bash "$COMP_DIR/rootlessrt.bash" "$@"
}
missing_from() { # missing_from LIST WANTED...: the WANTED words not in LIST
  local w miss=""
  for w in "${@:2}"; do grep -qxF -- "$w" <<<"$1" || miss+=" $w"; done
  printf '%s' "$miss"
}

got=$(bash_complete "$RRT" "")
is "$(missing_from "$got" $VERBS)" "" "bash: every verb"
got=$(bash_complete "$RRT" "-")
is "$(missing_from "$got" $GLOBAL_FLAGS)" "" "bash: every global flag"
miss=""
for v in "${!FLAGS[@]}"; do
  got=$(bash_complete "$RRT" "$v" "-")
  m=$(missing_from "$got" ${FLAGS[$v]})
  [ -n "$m" ] && miss+=" $v:[$m ]"
done
is "$miss" "" "bash: every flag of every verb (contrib/completion/rootlessrt.bash)"

b=$(mkbundle docs sleep 30)
id=$(new_id docs)
ok "create a container to complete" rrt create -b "$b" "$id"
got=$(bash_complete "$RRT" --root "$RRT_ROOT" kill "")
has_line "$got" "^$id\$" "bash: container ids from list -q (with --root from the line)"
got=$(bash_complete "$RRT" --root "$RRT_ROOT" kill "$id" "")
is "$(missing_from "$got" TERM KILL HUP USR1 WINCH)" "" "bash: signal names after the id"
mkdir -p "$T_WORK/bundles/one"
got=$(bash_complete "$RRT" create -b "$T_WORK/bundles/")
is "$got" "$T_WORK/bundles/one" "bash: directories for -b"

# ---------------------------------------------------------------- fish

if command -v fish >/dev/null; then
  fish_complete() { # fish_complete LINE: the candidates fish offers at the end of LINE
    fish -c 'source $argv[1]; complete -C $argv[2]' "$COMP_DIR/rootlessrt.fish" "$1" 2>&1 | cut -f1
  }
  got=$(fish_complete "$RRT ")
  is "$(missing_from "$got" $VERBS)" "" "fish: every verb"
  got=$(fish_complete "$RRT -")
  is "$(missing_from "$got" $GLOBAL_FLAGS)" "" "fish: every global flag"
  miss=""
  for v in "${!FLAGS[@]}"; do
    got=$(fish_complete "$RRT $v -")
    m=$(missing_from "$got" ${FLAGS[$v]})
    [ -n "$m" ] && miss+=" $v:[$m ]"
  done
  is "$miss" "" "fish: every flag of every verb (contrib/completion/rootlessrt.fish)"
  got=$(fish_complete "$RRT --root $RRT_ROOT kill ")
  has_line "$got" "^$id\$" "fish: container ids from list -q"
  got=$(fish_complete "$RRT kill $id ")
  is "$(missing_from "$got" TERM KILL HUP)" "" "fish: signal names after the id"
  got=$(fish_complete "$RRT create -b $T_WORK/bundles/")
  has_line "$got" "^$T_WORK/bundles/one/?\$" "fish: directories for -b"
else
  skip "fish is not installed (contrib/install-deps.sh installs it)" 6
fi

# ---------------------------------------------------------------- zsh

zfile=$COMP_DIR/_rootlessrt
if command -v zsh >/dev/null; then
  ok "zsh: _rootlessrt parses (zsh -n)" zsh -n "$zfile"
  # zsh_complete LINE: what zsh offers at the end of LINE, typed into an interactive zsh
  zsh_complete() {
    PATH="$(dirname "$RRT"):$PATH" zsh -f "$TESTS_DIR/zsh-complete.zsh" "$COMP_DIR" "$1" 2>&1
  }
  got=$(zsh_complete "rootlessrt ")
  is "$(missing_from "$got" $VERBS)" "" "zsh: every verb"
  got=$(zsh_complete "rootlessrt -")
  is "$(missing_from "$got" $GLOBAL_FLAGS)" "" "zsh: every global flag"
  miss="" errors=""
  for v in "${!FLAGS[@]}"; do
    got=$(zsh_complete "rootlessrt $v -")
    m=$(missing_from "$got" ${FLAGS[$v]})
    [ -n "$m" ] && miss+=" $v:[$m ]"
    errors+=$(grep '^ERROR: ' <<<"$got")
  done
  is "$miss" "" "zsh: every flag of every verb (contrib/completion/_rootlessrt)"
  is "$errors" "" "zsh: no completion errors"
  got=$(zsh_complete "rootlessrt --root $RRT_ROOT kill ")
  has_line "$got" "^$id\$" "zsh: container ids from list -q (with --root from the line)"
  got=$(zsh_complete "rootlessrt kill $id ")
  is "$(missing_from "$got" TERM KILL HUP USR1)" "" "zsh: signal names after the id"
  got=$(zsh_complete "rootlessrt create -b $T_WORK/bundles/")
  has_line "$got" "^one/?\$" "zsh: directories for -b"
else
  skip "zsh is not installed (contrib/install-deps.sh installs it)" 9
fi

# ---------------------------------------------------------------- README.md and docs/

# README.md is the front page (at most 250 lines); every page of docs/ is reachable from it.
TOP_DIR=$(cd "$TESTS_DIR/.." && pwd)
if [ -f "$TOP_DIR/README.md" ]; then
  n=$(wc -l <"$TOP_DIR/README.md")
  if [ "$n" -le 250 ]; then
    pass "README.md is a front page ($n lines, at most 250)"
  else
    fail "README.md is a front page" "$n lines, more than 250: move the text to its docs/ page"
  fi
else
  skip "no README.md beside tests/"
fi
if [ -f "$TOP_DIR/README.md" ] && [ -f "$TOP_DIR/docs/README.md" ]; then
  miss=""
  for page in "$TOP_DIR"/docs/*.md; do
    grep -qF "(docs/${page##*/}" "$TOP_DIR/README.md" || miss+=" ${page##*/}"
  done
  is "$miss" "" "README.md links every page of docs/"
  miss=""
  for page in "$TOP_DIR"/docs/*.md; do
    name=${page##*/}
    [ "$name" = README.md ] || grep -qF "]($name" "$TOP_DIR/docs/README.md" || miss+=" $name"
  done
  is "$miss" "" "docs/README.md lists every page of docs/"
else
  skip "no README.md and docs/README.md beside tests/" 2
fi

# ---------------------------------------------------------------- the AppArmor profile

aa_in=$CONTRIB_DIR/apparmor/rootlessrt.in
sed -e 's|@BINDIR@|/usr/bin|g' -e 's|@LIBEXECDIR@|/usr/libexec|g' "$aa_in" >"$T_WORK/aa"
like "$(grep -E '^profile ' "$T_WORK/aa" | tr '\n' ' ')" \
  '^profile rootlessrt /usr/bin/rootlessrt flags=\(unconfined\) \{ profile rootlessrt-net /usr/libexec/rootlessrt/rootlessrt-net flags=\(unconfined\) \{ $' \
  "apparmor: profiles for the installed rootlessrt and rootlessrt-net"
is "$(grep -c '^  userns,$' "$T_WORK/aa")" 2 "apparmor: both allow user namespaces"
parser=$(command -v apparmor_parser || echo /usr/sbin/apparmor_parser)
if [ -x "$parser" ]; then
  if run "$parser" -Q -K "$T_WORK/aa" && [ "$rc" -eq 0 ]; then
    pass "apparmor: apparmor_parser takes the profile"
  elif "$parser" --version | grep -q 'version [0-3]\.'; then
    # AppArmor 3 has no userns rules (nor does its kernel restrict user namespaces): the rest.
    sed -e '/^abi /d' -e '/^  userns,$/d' "$T_WORK/aa" >"$T_WORK/aa3"
    run "$parser" -Q -K "$T_WORK/aa3"
    is "$rc" 0 "apparmor: $("$parser" --version | head -n1) takes the profile but for abi 4.0 and userns"
  else
    fail "apparmor: apparmor_parser rejects the profile" "$err"
  fi
else
  skip "apparmor_parser is not installed (contrib/install-deps.sh installs apparmor)"
fi

run rrt delete --force "$id"
nothing_left "$id" "$b"

done_testing
