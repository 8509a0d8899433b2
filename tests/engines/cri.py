#!/usr/bin/python3
"""cri.py SOCKET HANDLER WORK: Kubernetes' CRI calls, as the kubelet makes them, against
containerd's CRI plugin at SOCKET, with the runtime handler HANDLER; one TAP line a check.

No generated code: the few CRI messages the scenarios need are written here as (field number,
value) lists and encoded on the protobuf wire format by hand (runtime.v1, the API containerd 1.6
serves; field numbers as in k8s.io/cri-api). grpcio (Debian's python3-grpcio) carries the bytes.
WORK is a directory the scenarios may use (host volumes); WORK/shared must be a shared mount
(the harness, cri.sh, makes it inside its own mount namespace).
"""
import json
import os
import subprocess
import sys
import time

import grpc

# ---------------------------------------------------------------- protobuf wire format


def varint(n):
    if n < 0:
        n += 1 << 64  # int32/int64 negatives are ten-byte varints
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def msg(*fields):
    """msg((NUMBER, VALUE), ...): VALUE is int/bool (varint), str/bytes, a nested msg() (bytes),
    a dict (a map<string,string>), or a list of any of those (a repeated field)."""
    out = bytearray()
    for num, val in fields:
        if val is None:
            continue
        vals = val if isinstance(val, list) else [val]
        if isinstance(val, dict):
            vals = [msg((1, k), (2, v)) for k, v in val.items()]
        for v in vals:
            if isinstance(v, bool) or isinstance(v, int):
                out += varint(num << 3) + varint(int(v))
            else:
                b = v.encode() if isinstance(v, str) else bytes(v)
                out += varint(num << 3 | 2) + varint(len(b)) + b
    return bytes(out)


def parse(data):
    """Decodes one message into {NUMBER: [values]}: ints for varints, bytes for the rest."""
    out, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(data, i)
        elif wire == 2:
            n, i = read_varint(data, i)
            v, i = data[i:i + n], i + n
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.setdefault(num, []).append(v)
    return out


def read_varint(data, i):
    n, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def one(m, num, default=None):
    return m.get(num, [default])[0]


def text(m, num):
    v = one(m, num, b"")
    return v.decode(errors="replace")


def signed(n):
    return n - (1 << 64) if n >= 1 << 63 else n


# ---------------------------------------------------------------- TAP

N = {"pass": 0, "fail": 0, "skip": 0}


def ok(cond, name, *diag):
    if cond:
        N["pass"] += 1
        print(f"ok - {name}", flush=True)
    else:
        N["fail"] += 1
        print(f"not ok - {name}", flush=True)
        for d in diag:
            for line in str(d).splitlines():
                print(f"#   {line}", flush=True)
    return cond


def skip(name, why):
    N["skip"] += 1
    print(f"ok # SKIP {name}: {why}", flush=True)


# ---------------------------------------------------------------- the CRI calls

SOCK, HANDLER, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
chan = grpc.insecure_channel("unix://" + SOCK)


def call(method, body, timeout=60):
    """Returns (parsed response, None) or (None, error text)."""
    f = chan.unary_unary(f"/runtime.v1.RuntimeService/{method}")
    try:
        return parse(f(body, timeout=timeout)), None
    except grpc.RpcError as e:
        return None, f"{e.code().name}: {e.details()}"


NODE, CONTAINER = 2, 1


def sandbox_config(name, cgroup_parent, privileged=False):
    ns = msg((1, NODE), (2, CONTAINER), (3, NODE))  # host network and IPC, own pid namespace
    sec = msg((1, ns), (6, privileged))
    linux = msg((1, cgroup_parent), (2, sec))
    return msg((1, msg((1, name), (2, f"uid-{name}"), (3, "rrt-cri"), (4, 0))),
               (3, os.path.join(WORK, "logs", name)), (8, linux))


def container_config(name, command, mounts=(), privileged=False, envs=(), resources=None,
                     workdir=None):
    ns = msg((1, NODE), (2, CONTAINER), (3, NODE))  # as the kubelet sends it for a v1 pod
    sec = msg((2, privileged), (3, ns))
    linux = msg((1, resources), (2, sec))
    return msg((1, msg((1, name), (2, 0))), (2, msg((1, IMAGE))), (3, list(command)),
               (5, workdir), (6, [msg((1, k), (2, v)) for k, v in envs]),
               (7, [m for m in mounts]), (11, f"{name}.log"), (15, linux))


def volume(host, ctr, propagation=0, readonly=False):
    return msg((1, ctr), (2, host), (3, readonly), (5, propagation))


def run_pod(name, cgroup_parent, privileged=False):
    cfg = sandbox_config(name, cgroup_parent, privileged)
    os.makedirs(os.path.join(WORK, "logs", name), exist_ok=True)
    r, err = call("RunPodSandbox", msg((1, cfg), (2, HANDLER)), timeout=120)
    return (text(r, 1) if r else None), cfg, err


def create_start(pod, cfg, ccfg):
    r, err = call("CreateContainer", msg((1, pod), (2, ccfg), (3, cfg)))
    if r is None:
        return None, f"CreateContainer: {err}"
    cid = text(r, 1)
    _, err = call("StartContainer", msg((1, cid)))
    if err:
        return cid, f"StartContainer: {err}"
    return cid, None


def status(cid):
    r, err = call("ContainerStatus", msg((1, cid), (2, True)))
    if r is None:
        return None, err
    st = parse(one(r, 1, b""))
    info = {}
    for kv in r.get(2, []):
        kv = parse(kv)
        info[text(kv, 1)] = text(kv, 2)
    return {"state": one(st, 3, 0), "exit_code": signed(one(st, 7, 0)), "reason": text(st, 10),
            "info": info}, None


def wait_state(cid, state, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        st, _ = status(cid)
        if st and st["state"] == state:
            return st
        time.sleep(0.1)
    return status(cid)[0]


def exec_sync(cid, cmd, timeout=20):
    r, err = call("ExecSync", msg((1, cid), (2, list(cmd)), (3, timeout)), timeout=timeout + 10)
    if r is None:
        return None, None, None, err
    return (one(r, 1, b"").decode(errors="replace"), one(r, 2, b"").decode(errors="replace"),
            signed(one(r, 3, 0)), None)


def pod_pid(pod):
    r, _ = call("PodSandboxStatus", msg((1, pod), (2, True)))
    if r is None:
        return None
    for kv in r.get(2, []):
        kv = parse(kv)
        if text(kv, 1) == "info":
            try:
                return json.loads(text(kv, 2)).get("pid")
            except ValueError:
                return None
    return None


def memory_limit(pid):
    """The memory limit of PID's cgroup in bytes (v1 memory.limit_in_bytes or v2 memory.max)."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = [l.rstrip("\n").split(":", 2) for l in f]
    except (OSError, TypeError):
        return None
    for _, ctrls, path in lines:
        if "memory" in ctrls.split(","):
            try:
                with open(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes") as f:
                    return int(f.read())
            except (OSError, ValueError):
                return None
    for _, ctrls, path in lines:
        if ctrls == "":
            for mnt in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                try:
                    with open(f"{mnt}{path}/memory.max") as f:
                        return int(f.read())
                except (OSError, ValueError):
                    continue
    return None


def remove_pod(pod):
    _, e1 = call("StopPodSandbox", msg((1, pod)))
    _, e2 = call("RemovePodSandbox", msg((1, pod)))
    return e1, e2


# ---------------------------------------------------------------- scenarios

IMAGE = os.environ.get("CRI_IMAGE", "docker.io/rrt/busybox:test")
CG = os.environ.get("CRI_CGROUP_PARENT", "/rrt-cri")
RUNNING, EXITED = 1, 2


def nested_job(spec):
    """nested.sh's CI job in a pod (CRI_NESTED_JOB: {"name": pod name, "command": [...],
    "mounts": [[host, ctr, readonly], ...], "devices": [path, ...], "run_as_user": uid}),
    non-privileged; prints what it printed."""
    name = spec.get("name", "nested")
    pod, cfg, err = run_pod(name, f"{CG}/{name}")
    if not pod:
        print(f"not ok - RunPodSandbox: {err}")
        return
    ns = msg((1, NODE), (2, CONTAINER), (3, NODE))
    user = spec.get("run_as_user")
    # What the kubelet sends for procMount Default: its masked and read-only paths.
    masked = ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
              "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
              "/sys/firmware"]
    readonly = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
    linux = msg((2, msg((2, False), (3, ns), (5, msg((1, user)) if user is not None else None),
                        (13, masked), (14, readonly))))
    envs = [msg((1, k), (2, v)) for k, v in spec.get("envs", {}).items()]
    ccfg = msg((1, msg((1, "job"), (2, 0))), (2, msg((1, IMAGE))), (3, spec["command"]), (6, envs),
               (7, [volume(h, c, readonly=ro) for h, c, ro in spec["mounts"]]),
               (8, [msg((1, d), (2, d), (3, "rwm")) for d in spec.get("devices", [])]),
               (11, "job.log"), (15, linux))
    cid, err = create_start(pod, cfg, ccfg)
    if err:
        print(f"not ok - the job's container starts: {err}")
    else:
        st = wait_state(cid, EXITED, int(os.environ.get("CRI_NESTED_TIMEOUT", "150")))
        if not st or st["state"] != EXITED:
            print(f"not ok - the job's container ends: {st}")
        try:
            with open(os.path.join(WORK, "logs", name, "job.log")) as f:
                for line in f:  # "TIME STREAM TAG TEXT" (the CRI log format)
                    print(line.rstrip("\n").split(" ", 3)[-1], flush=True)
        except OSError as e:
            print(f"not ok - the job's log: {e}")
    remove_pod(pod)


if os.environ.get("CRI_NESTED_JOB"):
    nested_job(json.loads(os.environ["CRI_NESTED_JOB"]))
    sys.exit(0)

r, err = call("Version", msg((1, "v1")))
ok(r is not None and text(r, 2) == "containerd", "Version: containerd's CRI plugin answers",
   err or r)

# A pod as the kubelet makes it: host network, its own pid namespace, a cgroup parent.
pod, cfg, err = run_pod("p1", f"{CG}/pod1")
ok(pod, "RunPodSandbox: the pause container runs (host network, cgroup parent)", err)
if not pod:
    print(f"cri: {N['pass']} passed, {N['fail']} failed, {N['skip']} skipped")
    sys.exit(1)

# The pause container's oomScoreAdj: -998, as containerd asks for a sandbox, or no less than
# containerd's own where it restricts it (a root without CAP_SYS_RESOURCE, cri.sh).
with open("/proc/self/oom_score_adj") as f:
    own = int(f.read())
with open("/proc/self/status") as f:
    bnd = int([l.split()[1] for l in f if l.startswith("CapBnd:")][0], 16)
want = str(-998 if bnd >> 24 & 1 else max(-998, own))
pid = pod_pid(pod)
try:
    with open(f"/proc/{pid}/oom_score_adj") as f:
        adj = f.read().strip()
except (OSError, TypeError) as e:
    adj = f"(unreadable: {e})"
ok(adj == want, f"RunPodSandbox: the pause process has the oomScoreAdj CRI gives it ({want})",
   f"pid {pid}: oom_score_adj {adj}")

# A container with a volume, environment, a working directory and limits.
vol = os.path.join(WORK, "vol")
os.makedirs(vol, exist_ok=True)
with open(os.path.join(vol, "file"), "w") as f:
    f.write("from the host\n")
res = msg((3, 512), (4, 64 << 20), (5, 500))  # cpu_shares, memory limit, oom_score_adj
cid, err = create_start(pod, cfg, container_config(
    "c1", ["sh", "-c", "echo started; exec sleep 1000"], mounts=[volume(vol, "/data")],
    envs=[("GREETING", "hello")], resources=res, workdir="/data"))
ok(cid and not err, "CreateContainer + StartContainer: a container with a volume and limits", err)
if cid and not err:
    st = wait_state(cid, RUNNING)
    ok(st and st["state"] == RUNNING, "ContainerStatus: RUNNING", st)
    out, _, code, err = exec_sync(cid, ["cat", "/data/file"])
    ok(out == "from the host\n" and code == 0, "ExecSync: the volume's file is there", out, err)
    out, _, code, err = exec_sync(cid, ["sh", "-c", "echo $GREETING; pwd"])
    ok(out == "hello\n/data\n", "ExecSync: the environment and the working directory", out, err)
    out, _, code, err = exec_sync(cid, ["sh", "-c", "echo oops >&2; exit 7"])
    ok(code == 7, "ExecSync: the command's exit status comes back (7)", code, err)
    out, _, code, err = exec_sync(cid, ["cat", "/proc/self/oom_score_adj"])
    ok(out.strip() == "500", "ExecSync: the container's oomScoreAdj is the one asked for (500)",
       out, err)
    out, _, code, err = exec_sync(cid, ["/no/such/program"])
    ok(code not in (0, None) or err, "ExecSync: a missing program fails", code, out, err)
    # The memory limit in the container's cgroup (v1 or v2), before and after an update that
    # leaves the CPU quota alone (period and quota 0, as the kubelet and the shim send them).
    pid = None
    try:
        pid = json.loads(status(cid)[0]["info"].get("info", "{}")).get("pid")
    except (TypeError, ValueError):
        pass
    ok(memory_limit(pid) == 64 << 20, "the container's cgroup has the memory limit (64 MiB)",
       f"pid {pid}: {memory_limit(pid)}")
    upd = msg((1, 0), (2, 0), (3, 512), (4, 128 << 20))
    _, err = call("UpdateContainerResources", msg((1, cid), (2, upd)))
    ok(not err, "UpdateContainerResources: a new memory limit, the CPU quota unchanged", err)
    ok(memory_limit(pid) == 128 << 20, "the container's cgroup has the new limit (128 MiB)",
       f"pid {pid}: {memory_limit(pid)}")
    _, err = call("StopContainer", msg((1, cid), (2, 2)), timeout=60)
    st = wait_state(cid, EXITED)
    ok(not err and st and st["state"] == EXITED, "StopContainer: EXITED after the grace period",
       err, st)
    _, err = call("RemoveContainer", msg((1, cid)))
    ok(not err, "RemoveContainer", err)

# A container that exits by itself; the pod is then stopped and removed (containerd kills what is
# left, and must recognise the runtime's "not running" answer).
cid, err = create_start(pod, cfg, container_config("c2", ["sh", "-c", "exit 3"]))
ok(cid and not err, "a container that exits by itself starts", err)
if cid:
    st = wait_state(cid, EXITED)
    ok(st and st["state"] == EXITED and st["exit_code"] == 3,
       "ContainerStatus: EXITED with its exit code (3)", st)
    _, err = call("StopContainer", msg((1, cid), (2, 0)))
    ok(not err, "StopContainer of an exited container succeeds", err)

e1, e2 = remove_pod(pod)
ok(not e1, "StopPodSandbox with an exited container in it", e1)
ok(not e2, "RemovePodSandbox", e2)
r, err = call("ListContainers", msg())
ok(r is not None and not r.get(1), "ListContainers: nothing left", err or r)

# rootfsPropagation rshared: a mount made inside a privileged container on a Bidirectional
# volume shows up on the host (the kubelet's mount propagation; CSI drivers rely on it).
pod, cfg, err = run_pod("p2", f"{CG}/pod2", privileged=True)
ok(pod, "RunPodSandbox: a second pod", err)
shared = os.path.realpath(os.path.join(WORK, "shared"))
if pod:
    cid, err = create_start(pod, cfg, container_config(
        "c3", ["sleep", "1000"], mounts=[volume(shared, "/shared", propagation=2)],
        privileged=True))
    ok(cid and not err, "a privileged container with a Bidirectional volume starts", err)
    if cid and not err:
        os.makedirs(os.path.join(shared, "sub"), exist_ok=True)
        out, serr, code, err = exec_sync(cid, ["mount", "-t", "tmpfs", "-o", "size=1m",
                                               "cri-prop", "/shared/sub"])
        ok(code == 0, "ExecSync: mount a tmpfs on the volume inside the container",
           f"exit {code}", out, serr, err)
        with open("/proc/self/mountinfo") as f:
            seen = any(l.split()[4] == os.path.join(shared, "sub") for l in f)
        ok(seen, "mount propagation: the container's mount reaches the host (Bidirectional)",
           subprocess.run(["grep", shared, "/proc/self/mountinfo"], capture_output=True,
                          text=True).stdout)
        subprocess.run(["umount", "-l", os.path.join(shared, "sub")], capture_output=True)
    e1, e2 = remove_pod(pod)
    ok(not e1 and not e2, "the second pod is stopped and removed", e1, e2)

print(f"cri: {N['pass']} passed, {N['fail']} failed, {N['skip']} skipped", flush=True)
sys.exit(1 if N["fail"] else 0)
