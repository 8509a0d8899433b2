#!/usr/bin/python3
# net-helper.py VERB ARGS...: the network ends of tests/integration/t-net*.sh and tests/netbench, on the host and (by
# way of the host's /usr bound read-only into the bundle) inside the container. Loopback only.
#
# Servers (run until killed):
#   udp-echo PORT                 echoes every datagram
#   xfer-server PORT              per connection: reads to EOF, replies "SHA256HEX\n" + the data
#   short-server PORT             per connection: reads a line, replies "pong LINE", closes
#   stream-server PORT            per connection: sends bytes until the peer goes away
#   tcp-hello ADDR PORT TEXT      per connection: sends TEXT, closes
#   dns ADDR PORT NAME IPV4       answers A queries for NAME with IPV4, NXDOMAIN otherwise
# Clients and checks (exit 0 on success, a reason on stdout otherwise):
#   free-port                     a port free for TCP and UDP on 127.0.0.1 (30000-59999)
#   is-free PORT [tcp|udp]        exit 0 when PORT can be bound on 127.0.0.1
#   udp-ping PORT TEXT            sends TEXT, prints the reply (retries: it is UDP)
#   xfer-client PORT BYTES        random BYTES up, shutdown(SHUT_WR), checks the checksum and echo
#   short-seq PORT N              N sequential short request/replies, prints how many succeeded
#   short-conc PORT N             N connections open at once, then each asks; prints successes
#   die-client PORT OUTFILE       reads a stream; "reading" then "ended ..." lines in OUTFILE
import hashlib
import os
import random
import socket
import socketserver
import struct
import sys
import threading
import time


def server(port, handler):
    class S(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 512

    S(("0.0.0.0", port), handler).serve_forever()


def recv_all(s):
    chunks = []
    while True:
        b = s.recv(1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


class Xfer(socketserver.BaseRequestHandler):
    def handle(self):
        data = recv_all(self.request)
        self.request.sendall(hashlib.sha256(data).hexdigest().encode() + b"\n" + data)


class Short(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().strip()
        self.wfile.write(b"pong " + line + b"\n")


class Stream(socketserver.BaseRequestHandler):
    def handle(self):
        buf = b"x" * 65536
        try:
            while True:
                self.request.sendall(buf)
        except OSError:
            pass


def short_once(port, i):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"%d\n" % i)
            return recv_all(s) == b"pong %d\n" % i
    except OSError:
        return False


def dns(addr, port, name, ip):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    while True:
        q, peer = s.recvfrom(512)
        if len(q) < 17:
            continue
        tid = struct.unpack("!H", q[:2])[0]
        i, labels = 12, []
        while i < len(q) and q[i]:
            labels.append(q[i + 1 : i + 1 + q[i]].decode(errors="replace"))
            i += 1 + q[i]
        qtype = struct.unpack("!H", q[i + 1 : i + 3])[0]
        qname = ".".join(labels).lower()
        ans = b""
        if qname == name and qtype == 1:
            ans = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton(ip)
        rcode = 0 if qname == name else 3
        hdr = struct.pack("!HHHHHH", tid, 0x8180 | rcode, 1, 1 if ans else 0, 0, 0)
        s.sendto(hdr + q[12 : i + 5] + ans, peer)


def is_free(port, proto="tcp"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM)
    if proto != "udp":  # as any server would: TIME_WAIT of old connections does not hold the port
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main(argv):
    verb, a = argv[1], argv[2:]
    if verb == "udp-echo":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", int(a[0])))
        while True:
            d, peer = s.recvfrom(65535)
            s.sendto(d, peer)
    elif verb == "xfer-server":
        server(int(a[0]), Xfer)
    elif verb == "short-server":
        server(int(a[0]), Short)
    elif verb == "stream-server":
        server(int(a[0]), Stream)
    elif verb == "tcp-hello":
        l = socket.socket()
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind((a[0], int(a[1])))
        l.listen(16)
        print("listening", flush=True)
        while True:
            c, _ = l.accept()
            c.sendall(a[2].encode() + b"\n")
            c.close()
    elif verb == "dns":
        dns(a[0], int(a[1]), a[2].lower(), a[3])
    elif verb == "free-port":
        rnd = random.SystemRandom()
        for _ in range(200):
            p = rnd.randrange(30000, 60000)
            if is_free(p, "tcp") and is_free(p, "udp"):
                print(p)
                return 0
        print("no free port found")
        return 1
    elif verb == "is-free":
        return 0 if is_free(int(a[0]), a[1] if len(a) > 1 else "tcp") else 1
    elif verb == "udp-ping":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(0.5)
        for _ in range(10):
            s.sendto(a[1].encode(), ("127.0.0.1", int(a[0])))
            try:
                print(s.recv(65535).decode(errors="replace"))
                return 0
            except socket.timeout:
                continue
            except OSError as e:  # ICMP unreachable from an earlier try: try again
                time.sleep(0.2)
        print("no reply")
        return 1
    elif verb == "xfer-client":
        port, n = int(a[0]), int(a[1])
        data = os.urandom(n)
        want = hashlib.sha256(data).hexdigest().encode()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            out = []
            # Send and receive at once, so that a relay that needs both directions moving is fine.
            t = threading.Thread(target=lambda: out.append(recv_all(s)))
            t.start()
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)  # half-close: the reply must still come in full
            t.join(60)
        if not out:
            print("no reply within 60 s")
            return 1
        reply = out[0]
        head, _, body = reply.partition(b"\n")
        if head != want:
            print("upload: container got sha256 %s, sent %s" % (head[:64].decode(errors="replace"), want.decode()))
            return 1
        if body != data:
            print("download: %d bytes back, sha256 %s, want %d bytes %s" % (
                len(body), hashlib.sha256(body).hexdigest(), n, want.decode()))
            return 1
        print("ok %d bytes each way" % n)
        return 0
    elif verb == "short-seq":
        port, n = int(a[0]), int(a[1])
        print(sum(short_once(port, i) for i in range(n)))
        return 0
    elif verb == "short-conc":
        port, n = int(a[0]), int(a[1])
        socks, good = [], 0
        for i in range(n):
            try:
                socks.append((i, socket.create_connection(("127.0.0.1", port), timeout=10)))
            except OSError:
                pass
        for i, s in socks:  # all n are open before the first request
            try:
                s.sendall(b"%d\n" % i)
            except OSError:
                pass
        for i, s in socks:
            try:
                good += recv_all(s) == b"pong %d\n" % i
            except OSError:
                pass
            s.close()
        print(good)
        return 0
    elif verb == "die-client":
        port, outf = int(a[0]), a[1]
        with open(outf, "a") as f:
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.settimeout(30)
            got = 0
            reason = "timeout"
            try:
                while True:
                    b = s.recv(1 << 20)
                    if not b:
                        reason = "eof"
                        break
                    if got < (1 << 20) <= got + len(b):
                        print("reading", file=f, flush=True)
                    got += len(b)
            except socket.timeout:
                reason = "timeout"
            except OSError as e:
                reason = "error " + (os.strerror(e.errno) if e.errno else str(e))
            print("ended %s %.3f" % (reason, time.monotonic()), file=f, flush=True)
        return 0
    else:
        print("unknown verb", verb, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
