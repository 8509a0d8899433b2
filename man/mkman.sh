#!/bin/sh
# mkman.sh RUNTIME SOURCE OUTDIR: writes the man pages into OUTDIR: rootlessrt.1, the overview,
# from SOURCE with the line "@VERBS@" replaced by the list of the verb pages, and one page
# rootlessrt-VERB.1 per verb that `RUNTIME --list-flags` names (help aside), made from what
# `RUNTIME help VERB` prints (cli/usage.c, cli/flag_docs.c): its usage as the synopsis, its
# summary as the name line, its paragraphs as the description, its flags as FLAGS. So a new
# verb gets its page from its help text alone, and the pages say what `help` says.
# @VERSION@ becomes the version. Only POSIX sh, sed and awk (mawk is enough).
set -eu
[ $# -eq 3 ] || {
  echo "usage: mkman.sh RUNTIME SOURCE OUTDIR" >&2
  exit 2
}
rt=$1
src=$2
outdir=$3
version=$("$rt" --version | sed -n 's/^rootlessrt version //p')
verbs=$("$rt" --list-flags | awk '$1 == "verb" && $2 != "help" {print $2}')
[ -n "$verbs" ] || {
  echo "mkman.sh: $rt --list-flags names no verb" >&2
  exit 1
}

# roff escapes: backslashes first, hyphens as \-, quotes as \(aq and \(ga (so that they are
# printed as typed, not as typographic quotes).
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/'/\\\\(aq/g" -e 's/`/\\(ga/g'; }

help_of() { # help_of VERB: `help VERB`, roff-escaped
  out=$("$rt" help "$1") || {
    echo "mkman.sh: $rt help $1 failed" >&2
    exit 1
  }
  [ -n "$out" ] || {
    echo "mkman.sh: $rt help $1 printed nothing" >&2
    exit 1
  }
  printf '%s\n' "$out" | roff
}

# The layout of `help VERB` (usage.c's rrt_cmd_usage): the usage lines, a blank line, the
# summary, then blank-line separated blocks: paragraphs, then flag lists (a heading ending in
# ':', each flag indented by 2, its text by 6).
verb_page() { # verb_page VERB
  help_of "$1" | awk -v verb="$1" -v version="$version" '
    function text(s) { # a line of running text: no leading blank, no leading control character
      sub(/^ +/, "", s)
      if (s ~ /^[.]/) s = "\\&" s
      return s
    }
    function tag(spec,    n, w, i, word, comma, out) { # -b, --bundle DIR: bold flags, italic names
      n = split(spec, w, " ")
      out = ""
      for (i = 1; i <= n; i++) {
        word = w[i]
        comma = ""
        if (word ~ /,$/) { comma = ","; word = substr(word, 1, length(word) - 1) }
        if (word ~ /^\\-/ || word !~ /[A-Z]/) word = "\\fB" word "\\fR"
        else word = "\\fI" word "\\fR"
        out = out (i > 1 ? " " : "") word comma
      }
      return out
    }
    BEGIN {
      name = "rootlessrt\\-" verb
      state = "usage"; nusage = 0; summary = ""; nblock = 0
    }
    state == "usage" {
      if ($0 == "") { state = "summary"; next }
      usage[++nusage] = $0
      next
    }
    state == "summary" {
      if ($0 == "") { state = "blocks"; nblock = 1; nlines[1] = 0; next }
      summary = summary (summary == "" ? "" : " ") text($0)
      next
    }
    {
      if ($0 == "") { if (nlines[nblock] > 0) { nblock++; nlines[nblock] = 0 }; next }
      line[nblock, ++nlines[nblock]] = $0
    }
    END {
      if (state == "usage" || summary == "") {
        print "mkman.sh: help " verb ": not usage, a blank line and a summary" > "/dev/stderr"
        exit 1
      }
      if (nlines[nblock] == 0) nblock--
      print ".\\\" rootlessrt-" verb ".1: made by man/mkman.sh from `rootlessrt help " verb "`; edit"
      print ".\\\" cli/usage.c and cli/flag_docs.c, not this page."
      print ".TH " toupper(name) " 1 \"\" \"rootlessrt " version "\" \"User Commands\""
      print ".nh"
      print ".ad l"
      print ".SH NAME"
      print name " \\- " summary
      print ".SH SYNOPSIS"
      print ".nf"
      for (i = 1; i <= nusage; i++) {
        u = usage[i]
        if (i == 1 && sub(/^Usage: rootlessrt/, "", u)) u = "\\fBrootlessrt\\fR" u
        print (u ~ /^[.]/ ? "\\&" : "") u
      }
      print ".fi"
      print ".SH DESCRIPTION"
      print toupper(substr(summary, 1, 1)) substr(summary, 2) (summary ~ /[.)]$/ ? "" : ".")
      inflags = 0
      for (b = 1; b <= nblock; b++) {
        first = line[b, 1]
        isflags = nlines[b] > 1 && first ~ /:$/ && line[b, 2] ~ /^  [^ ]/
        if (isflags && !inflags) { print ".SH FLAGS"; inflags = 1 }
        if (!isflags) {
          print ".PP"
          for (i = 1; i <= nlines[b]; i++) print text(line[b, i])
          continue
        }
        if (first != "Flags:") { print ".PP"; print text(first) }
        for (i = 2; i <= nlines[b]; i++) {
          l = line[b, i]
          if (l ~ /^  [^ ]/) { print ".TP"; sub(/^  /, "", l); print tag(l) }
          else print text(l)
        }
      }
      print ".SH SEE ALSO"
      print ".BR rootlessrt (1)"
    }'
}

mkdir -p "$outdir"
for verb in $verbs; do
  verb_page "$verb" >"$outdir/rootlessrt-$verb.1.tmp"
  mv "$outdir/rootlessrt-$verb.1.tmp" "$outdir/rootlessrt-$verb.1"
done

verb_list() { # the overview's list of the verb pages, each with its summary
  for verb in $verbs; do
    echo ".TP"
    echo ".BR rootlessrt\\-$verb (1)"
    help_of "$verb" | awk 'seen && $0 == "" {exit} seen {sub(/^ +/, ""); print} $0 == "" {seen = 1}'
  done
}

while IFS= read -r line; do
  case $line in
    @VERBS@) verb_list ;;
    *) printf '%s\n' "$line" | sed "s/@VERSION@/$version/g" ;;
  esac
done <"$src" >"$outdir/rootlessrt.1.tmp"
mv "$outdir/rootlessrt.1.tmp" "$outdir/rootlessrt.1"
