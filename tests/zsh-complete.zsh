# zsh-complete.zsh COMPDIR LINE: prints, one a line, the matches zsh's completion system (with
# the completion functions of COMPDIR first in fpath) offers at the end of LINE, as typed into
# an interactive zsh on a pseudo-terminal (zsh/zpty) followed by a TAB. For t-docs.sh.
zmodload zsh/zpty || exit 2
zpty rrt zsh -f -i || exit 2
zpty -w rrt "PS1=''; RPROMPT=''; fpath=(${(q)1} \$fpath)"
zpty -w rrt 'autoload -Uz compinit && compinit -u -D'
# Every match added is also printed; the markers are split in what is typed, so that the
# terminal's echo of these lines never matches them.
zpty -w rrt 'compadd() { local -a m; builtin compadd -A m "$@"; local x; for x in $m; do print -r -- "MAT""CH:$x"; done; builtin compadd "$@"; }'
zpty -w rrt '_rrt_done() { print -r -- "COMPLETION-""DONE"; }; comppostfuncs=(_rrt_done)'
zpty -w rrt 'bindkey "^I" complete-word; zstyle ":completion:*" menu no; LISTMAX=100000'
zpty -w -n rrt "$2"$'\t'
local line
integer tries=0
while (( tries++ < 1200 )); do # at most a minute without output
  line=
  if ! zpty -r -t rrt line; then
    sleep 0.05
    continue
  fi
  tries=0
  [[ $line == *COMPLETION-DONE* ]] && break
  [[ $line == *MATCH:* ]] && print -r -- ${${line#*MATCH:}%%$'\r'*}
  [[ $line == *_arguments:* || $line == *"command not found"* ]] && print -r -- "ERROR: ${line%%$'\r'*}"
done
zpty -d rrt
(( tries < 1200 ))
