#!/bin/bash
# t-features.sh: `features` prints the features.md document: valid against
# features-schema.json, with the versions, hooks, namespaces, capabilities, cgroup and seccomp
# facts of this build and this kernel.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

run rrt features
is "$rc" 0 "features exits 0"
[ "$rc" = 0 ] || diag "stderr: $err"
doc=$out
is "$(valid_against features-schema.json "$doc")" "" "features is valid against features-schema.json"
is "$(jq -r '"\(.ociVersionMin) \(.ociVersionMax)"' <<<"$doc")" "1.0.0 1.3.0" "ociVersionMin/Max"
is "$(jq -r '.hooks | sort | join(",")' <<<"$doc")" \
  "createContainer,createRuntime,poststart,poststop,prestart,startContainer" "the six hook kinds"
for o in ro rw bind rbind nosuid rprivate rro; do
  is "$(jq --arg o "$o" '.mountOptions | index($o) != null' <<<"$doc")" true "mountOptions has $o"
done
is "$(jq '[.mountOptions | index("idmap"), index("ridmap")] | map(. != null) | all' <<<"$doc")" true "mountOptions claims idmap and ridmap"
is "$(jq -r '.linux.namespaces | sort | join(",")' <<<"$doc")" \
  "cgroup,ipc,mount,network,pid,time,user,uts" "every namespace type"
last=$(cat /proc/sys/kernel/cap_last_cap)
is "$(jq '.linux.capabilities | length' <<<"$doc")" "$((last + 1))" \
  "one capability per bit up to cap_last_cap ($last)"
is "$(jq '.linux.capabilities | index("CAP_SYS_ADMIN") != null' <<<"$doc")" true "CAP_SYS_ADMIN listed"
is "$(jq -c '.linux.cgroup' <<<"$doc")" \
  '{"v1":true,"v2":true,"systemd":true,"systemdUser":true,"rdma":false}' "cgroup facts"
is "$(jq -r '.linux.seccomp.enabled' <<<"$doc")" true "seccomp enabled"
is "$(jq '.linux.seccomp.actions | length' <<<"$doc")" 9 "nine seccomp actions"
is "$(jq '.linux.seccomp.operators | length' <<<"$doc")" 7 "seven seccomp operators"
is "$(jq '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") != null' <<<"$doc")" true "x86_64 arch"
is "$(jq '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_TSYNC") != null' <<<"$doc")" \
  true "TSYNC supported"
is "$(jq -c '[.linux.apparmor.enabled, .linux.selinux.enabled, .linux.intelRdt.enabled,
  .linux.mountExtensions.idmap.enabled]' <<<"$doc")" '[false,false,false,true]' "LSMs and rdt off, idmap on"
like "$(jq -r '.annotations["io.github.seccomp.libseccomp.version"]' <<<"$doc")" \
  '^[0-9]+\.[0-9]+\.[0-9]+$' "libseccomp version annotation"
is "$(jq -r '.annotations["dev.rootlessrt.network.slirp"]' <<<"$doc")" true "slirp annotation"
run rrt features extra
isnt "$rc" 0 "features with an argument fails"
like "$err" 'unexpected argument' "and says why"
done_testing
