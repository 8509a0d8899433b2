#!/usr/bin/python3
# udp-idle.py: the UDP relay's idle flows closed while the container's replies on them are in the
# same batch of events as a new client's datagram (issue 19.3), both ends. Loopback only.
#   server PORT DIR          (in the container) echoes every datagram and remembers each peer's
#                            last one; once DIR/trigger exists, sends "late:" + that datagram to
#                            every peer and creates DIR/sent
#   clients PORT N IDLE_S HELPER_PID DIR
#                            (on the host) N clients ping; they stay idle past IDLE_S; then, with
#                            the helper stopped, a new client sends and the container replies on
#                            every idle flow; the helper continues. Prints
#                            "pinged=N new=ok late_wrong=0 again=N"
import os
import select
import signal
import socket
import sys
import time


def server(port, d):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    peers = {}
    sent = False
    while True:
        r, _, _ = select.select([s], [], [], 0.02)
        if r:
            data, addr = s.recvfrom(65536)
            peers[addr] = data
            s.sendto(data, addr)
        if not sent and os.path.exists(os.path.join(d, "trigger")):
            for addr, data in peers.items():
                s.sendto(b"late:" + data, addr)
            open(os.path.join(d, "sent"), "w").close()
            sent = True


def alive(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return not any(l.startswith("State:") and "Z" in l for l in f)
    except OSError:
        return False


def ping(s, port, text, tries=10):
    for _ in range(tries):
        s.sendto(text, ("127.0.0.1", port))
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline:
            r, _, _ = select.select([s], [], [], max(0, deadline - time.monotonic()))
            if not r:
                break
            got = s.recv(65536)
            if got == text:
                return True
    return False


def clients(port, n, idle_s, helper, d):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    pinged = sum(ping(s, port, b"hello-%d" % i) for i, s in enumerate(socks))
    # Past the idle timeout: the relay measures it on a monotonic clock, so this cannot be short.
    time.sleep(idle_s + 0.5)
    new = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    os.kill(helper, signal.SIGSTOP)
    try:
        new.sendto(b"new", ("127.0.0.1", port))
        open(os.path.join(d, "trigger"), "w").close()
        deadline = time.monotonic() + 20
        while not os.path.exists(os.path.join(d, "sent")) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        os.kill(helper, signal.SIGCONT)
    new_ok = ping(new, port, b"new")
    # A late reply that got through must be that client's own.
    late_wrong = 0
    for i, s in enumerate(socks):
        s.setblocking(False)
        while True:
            try:
                got = s.recv(65536)
            except BlockingIOError:
                break
            if got not in (b"late:hello-%d" % i, b"hello-%d" % i):
                late_wrong += 1
        s.setblocking(True)
    # Each client again, on a fresh flow; a helper that died answers none (and is not waited for).
    again = 0
    for i, s in enumerate(socks):
        if not alive(helper):
            break
        again += ping(s, port, b"again-%d" % i, tries=3)
    print("pinged=%d new=%s late_wrong=%d again=%d" % (pinged, "ok" if new_ok else "lost", late_wrong, again))


def main(argv):
    if argv[1] == "server":
        server(int(argv[2]), argv[3])
    elif argv[1] == "clients":
        clients(int(argv[2]), int(argv[3]), float(argv[4]), int(argv[5]), argv[6])
    else:
        sys.exit("udp-idle.py: unknown verb " + argv[1])


if __name__ == "__main__":
    main(sys.argv)
