#!/bin/bash
# t-docs.sh: the man pages and the shell completions against the binary: every verb the parser
# has (the hidden `rootlessrt --list-flags [VERB]`, printed from the parser's own tables) has its
# man page rootlessrt-VERB(1), which describes every flag the verb accepts, and the bash, zsh and
# fish completions offer them; every page renders without warnings and says what `help VERB` says; the
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

# ---------------------------------------------------------------- the man pages

# man/mkman.sh makes rootlessrt(1) and one rootlessrt-VERB(1) per verb from `help VERB`.
MAN_OUT=$T_WORK/man
rendered() { MANWIDTH=200 LC_ALL=C man -l "$1" 2>/dev/null | col -b; } # PAGE as man prints it
squeeze() { tr -s ' \t\n' '   ' | tr 'A-Z' 'a-z'; }
# blocks: stdin's blank-line separated blocks, each squeezed, NUL-terminated
blocks() { awk -v RS= '{gsub(/[ \t\n]+/, " "); sub(/^ /, ""); sub(/ $/, ""); printf "%s%c", tolower($0), 0}'; }
if [ -z "$MAN_DIR" ] || [ ! -f "$MAN_DIR/rootlessrt.1.in" ]; then
  skip "no man/ beside tests/ (the man pages' source)" 8
elif ! command -v groff >/dev/null || ! command -v man >/dev/null; then
  skip "groff or man is not installed (contrib/install-deps.sh installs them)" 8
else
  run sh "$MAN_DIR/mkman.sh" "$RRT" "$MAN_DIR/rootlessrt.1.in" "$MAN_OUT"
  is "$rc:$err" "0:" "man/mkman.sh makes the pages"
  miss=""
  for v in $VERBS; do
    [ "$v" = help ] || [ -s "$MAN_OUT/rootlessrt-$v.1" ] || miss+=" $v"
  done
  is "$miss" "" "every verb has its page rootlessrt-VERB(1)"
  warned="" warned_man=""
  for page in "$MAN_OUT"/*.1; do
    w=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
    [ -z "$w" ] || warned+=" ${page##*/}: $w"
    w=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$w" ] || warned_man+=" ${page##*/}: $w"
  done
  is "$warned" "" "groff -ww -man: no warnings on any page"
  is "$warned_man" "" "man --warnings -l: no warnings on any page"
  overview=$(rendered "$MAN_OUT/rootlessrt.1")
  miss=""
  for v in $VERBS; do
    [ "$v" = help ] || grep -qF "rootlessrt-$v(1)" <<<"$overview" || miss+=" $v"
  done
  is "$miss" "" "rootlessrt(1) lists every verb's page"
  # Every block of `help VERB` (the synopsis, the summary, the paragraphs, the flags with their
  # text) is in the verb's page as man prints it.
  miss=""
  for v in $VERBS; do
    [ "$v" = help ] && continue
    text=$(rendered "$MAN_OUT/rootlessrt-$v.1" | squeeze)
    while IFS= read -r -d '' block; do
      [[ $text == *"$block"* ]] || miss+=" $v:[${block:0:50}...]"
    done < <("$RRT" help "$v" | sed -e 's/^Usage: //' -e '/^Flags:$/d' | blocks)
  done
  is "$miss" "" "each page says what 'rootlessrt help VERB' says"
  # Every flag the verb's parser takes (--list-flags VERB) is described in its page's FLAGS.
  miss=""
  for v in "${!FLAGS[@]}"; do
    sec=$(rendered "$MAN_OUT/rootlessrt-$v.1" | sed -n '/^FLAGS$/,/^SEE ALSO$/p')
    for f in ${FLAGS[$v]}; do
      grep -qE -- "(^|[^a-z-])$f([^a-z-]|\$)" <<<"$sec" || miss+=" $v:$f"
    done
  done
  is "$miss" "" "each page describes every flag of its verb (cli/flag_docs.c)"
  # A verb the tables gain gets its page from its help text: a runtime whose --list-flags
  # names one verb more.
  fake=$T_WORK/fake-rt
  {
    echo '#!/bin/bash'
    echo "rt='$RRT'"
    cat <<'EOS'
case "$*" in
--list-flags) "$rt" --list-flags && echo 'verb frobnicate' ;;
"help frobnicate")
  printf 'Usage: rootlessrt [global flags] frobnicate [--hard] ID\n\nfrobnicate a container\n'
  printf '\nFlags:\n  --hard\n      Frobnicate hard.\n' ;;
*) exec "$rt" "$@" ;;
esac
EOS
  } >"$fake"
  chmod +x "$fake"
  run sh "$MAN_DIR/mkman.sh" "$fake" "$MAN_DIR/rootlessrt.1.in" "$T_WORK/man2"
  new=$(rendered "$T_WORK/man2/rootlessrt-frobnicate.1" | squeeze)
  like "$rc:$new" '^0:.*rootlessrt-frobnicate - frobnicate a container.* --hard frobnicate hard\.' \
    "a verb new to the tables gets its page from its help text alone"
  like "$(rendered "$T_WORK/man2/rootlessrt.1")" 'rootlessrt-frobnicate\(1\)' \
    "and rootlessrt(1) lists it"
fi

# The overview's GLOBAL FLAGS section (man/rootlessrt.1.in) describes every global flag.
roff_flag() { sed 's/-/\\\\-/g' <<<"$1"; } # --bundle -> \-\-bundle (as an ERE)
if [ -n "$MAN_DIR" ] && [ -f "$MAN_DIR/rootlessrt.1.in" ]; then
  sec=$(awk '$0 == ".SH GLOBAL FLAGS" {on = 1; next} on && /^\.S[SH] / {exit} on' "$MAN_DIR/rootlessrt.1.in")
  miss=""
  for f in $GLOBAL_FLAGS; do
    grep -qE -- "(^|[^a-z\\\\-])$(roff_flag "$f")([^a-z-]|\$)" <<<"$sec" || miss+=" $f"
  done
  is "$miss" "" "rootlessrt(1) describes every global flag"
else
  skip "no man/ beside tests/"
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

# Every relative link and #anchor resolves (contrib/linkcheck.py, in make lint): on the pages as
# they are, then on a copy with a link to a missing page, an anchor no heading makes and a man
# page naming a verb page that does not exist.
if [ -f "$TOP_DIR/README.md" ] && [ -d "$TOP_DIR/docs" ]; then
  L=$T_WORK/links
  mkdir -p "$L"
  cp -r "$TOP_DIR/README.md" "$TOP_DIR/docs" "$L/"
  run bash -c 'cd "$1" && "$2" "$3" README.md docs/*.md' _ "$L" "$PY" "$CONTRIB_DIR/linkcheck.py"
  is "$rc:$err" "0:" "linkcheck: every relative link and anchor of README.md and docs/ resolves"
  printf '\nSee [the page](gone.md) and [a part](cgroups.md#no-such-heading).\n' >>"$L/docs/ci.md"
  run bash -c 'cd "$1" && "$2" "$3" README.md docs/*.md' _ "$L" "$PY" "$CONTRIB_DIR/linkcheck.py"
  like "$rc:$err" '^1:.*docs/ci\.md:[0-9]+: gone\.md: no such file.*docs/ci\.md:[0-9]+: cgroups\.md#no-such-heading: .*no heading with the anchor' \
    "linkcheck: a link to a missing page and an anchor no heading makes fail, each named"
  if [ -d "$MAN_OUT" ]; then
    cp -r "$MAN_OUT" "$L/man"
    run "$PY" "$CONTRIB_DIR/linkcheck.py" --man "$L/man"
    is "$rc:$err" "0:" "linkcheck --man: every rootlessrt page a man page names exists"
    printf '.BR rootlessrt\\-nosuch (1)\n' >>"$L/man/rootlessrt-run.1"
    run "$PY" "$CONTRIB_DIR/linkcheck.py" --man "$L/man"
    like "$rc:$err" '^1:.*rootlessrt-run\.1:[0-9]+: rootlessrt-nosuch\(1\): no such page' \
      "linkcheck --man: a page naming a missing verb page fails"
  else
    skip "no man pages were made" 2
  fi
else
  skip "no README.md and docs/ beside tests/" 4
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
