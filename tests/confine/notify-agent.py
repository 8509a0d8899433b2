#!/usr/bin/python3
# notify-agent.py SOCKET OUT: a seccomp notify agent for one container: accepts the runtime's
# connection on SOCKET, receives the listener fd over SCM_RIGHTS and the containerProcessState
# JSON, writes "fds=N" and the JSON to OUT, then closes the listener: every notified syscall of
# the container then fails with ENOSYS, which the test can see from inside.
import json
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(30)
open(out + ".ready", "w").close()
conn, _ = srv.accept()
msg, fds, _, _ = socket.recv_fds(conn, 65536, 4)
data = msg
while True:
    more = conn.recv(65536)
    if not more:
        break
    data += more
state = json.loads(data)
with open(out, "w") as f:
    f.write("fds=%d\n" % len(fds))
    json.dump(state, f)
for fd in fds:
    os.close(fd)
