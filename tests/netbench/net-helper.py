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
#   tcp-nth ADDR PORT             per connection: sends "conn N" (its count from 1), closes
#   same-sport PORT_A PORT_B      connects to PORT_A, reads to EOF, closes; then from the same
#                                 source port to PORT_B (at NET_HOST): prints "SPORT: A | B SECS"
#   dns ADDR PORT NAME IPV4       answers A queries for NAME with IPV4, NXDOMAIN otherwise
# Clients and checks (exit 0 on success, a reason on stdout otherwise):
#   free-port                     a port free for TCP and UDP on 127.0.0.1 (30000-59999)
#   is-free PORT [tcp|udp]        exit 0 when PORT can be bound on 127.0.0.1
#   udp-ping PORT TEXT            sends TEXT, prints the reply (retries: it is UDP)
#   xfer-client PORT BYTES        random BYTES up, shutdown(SHUT_WR), checks the checksum and echo
#   short-seq PORT N              N sequential short request/replies, prints how many succeeded
#   short-conc PORT N             N connections open at once, then each asks; prints successes
#   die-client PORT OUTFILE       reads a stream; "reading" then "ended ..." lines in OUTFILE
# The clients connect to 127.0.0.1, or to $NET_HOST (a container's 10.0.2.2, fd00::2). And:
#   connect HOST PORT [SECS]      "ok", or the errno's name (or "timeout" after SECS, 20), and
#                                 the seconds it took
#   udp-refused HOST PORT         a datagram on a connected socket to a port nothing listens on:
#                                 the errno of the next recv (or "timeout" after 3 s) and the time
#   mss HOST PORT                 the connected socket's TCP_MAXSEG and the first line it reads
#   hc-server PORT N OUTFILE      per connection: sends N bytes, shuts down its side, reads to EOF,
#                                 writes "got BYTES SHA256" to OUTFILE
#   hc-client PORT M              reads to EOF (N bytes), then sends M bytes and shuts down;
#                                 prints "ok got N sha256 SHA256 sent M" once the server closed
#   probe HOST PORT               connects, sends a request, prints what came back: "connect=ok
#                                 got=BYTES end=eof|ERRNO" (or "connect=ERRNO")
#   count-server PORT             per connection: reads to EOF, replies "BYTES\n"
#   count-client PORT BYTES       sends BYTES (from a 1 MiB buffer), shuts down, prints the reply
#   udp-rate PORT SECS WINDOW     datagrams to a udp-echo with WINDOW in flight (a lost one is
#                                 replaced after 0.2 s): prints the echoes per second
#   nft-delete-table FAMILY NAME  as a container's root: deletes that nf_tables table (netlink)
#   nft-flush                     as a container's root: deletes every table ("nft flush ruleset")
#   lo-listeners                  the TCP ports listening on 127.0.0.1 here (/proc/net/tcp)
import errno
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

    # NET_BIND=127.0.0.1 on the host: a test's servers are on its loopback only.
    S((os.environ.get("NET_BIND", "0.0.0.0"), port), handler).serve_forever()


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


class HalfClose(socketserver.BaseRequestHandler):
    n, outf = 0, ""

    def handle(self):
        self.request.sendall(b"s" * self.n)
        self.request.shutdown(socket.SHUT_WR)  # our side first: the client still sends after it
        data = recv_all(self.request)
        with open(self.outf, "a") as f:
            print("got %d %s" % (len(data), hashlib.sha256(data).hexdigest()), file=f, flush=True)


def nft_delete_table(family, name):
    # A batch of one NFT_MSG_DELTABLE, as nft does, on NETLINK_NETFILTER; no name and family
    # NFPROTO_UNSPEC: every table, as "nft flush ruleset" asks.
    fam = {"inet": 1, "ip": 2, "ip6": 10, "all": 0}[family]
    def msg(mtype, flags, fam_, res_id, payload, seq):
        body = struct.pack("=BBH", fam_, 0, socket.htons(res_id)) + payload
        return struct.pack("=IHHII", 16 + len(body), mtype, flags, seq, 0) + body
    nm = name.encode() + b"\0"
    attr = struct.pack("=HH", 4 + len(nm), 1) + nm if name else b""  # NFTA_TABLE_NAME
    attr += b"\0" * ((4 - len(attr) % 4) % 4)
    batch = msg(0x10, 1, 0, 10, b"", 1)  # NFNL_MSG_BATCH_BEGIN, res_id NFNL_SUBSYS_NFTABLES
    batch += msg((10 << 8) | 2, 1 | 4, fam, 0, attr, 2)  # NFT_MSG_DELTABLE, REQUEST|ACK
    batch += msg(0x11, 1, 0, 10, b"", 3)  # NFNL_MSG_BATCH_END
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)  # NETLINK_NETFILTER
    s.settimeout(5)
    s.send(batch)
    r = s.recv(4096)
    err = struct.unpack("=i", r[16:20])[0] if struct.unpack("=H", r[4:6])[0] == 2 else 0
    return "deleted" if err == 0 else errno.errorcode.get(-err, str(-err))


class Count(socketserver.BaseRequestHandler):
    def handle(self):
        n = 0
        while True:
            b = self.request.recv(1 << 20)
            if not b:
                break
            n += len(b)
        self.request.sendall(b"%d\n" % n)


class Stream(socketserver.BaseRequestHandler):
    def handle(self):
        buf = b"x" * 65536
        try:
            while True:
                self.request.sendall(buf)
        except OSError:
            pass


HOST = os.environ.get("NET_HOST", "127.0.0.1")


def short_once(port, i):
    try:
        with socket.create_connection((HOST, port), timeout=10) as s:
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
        s.bind((os.environ.get("NET_BIND", "0.0.0.0"), int(a[0])))
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
        l = socket.socket(socket.AF_INET6 if ":" in a[0] else socket.AF_INET)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind((a[0], int(a[1])))
        l.listen(16)
        print("listening", flush=True)
        while True:
            c, _ = l.accept()
            c.sendall(a[2].encode() + b"\n")
            c.close()
    elif verb == "tcp-nth":
        l = socket.socket(socket.AF_INET)
        l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        l.bind((a[0], int(a[1])))
        l.listen(16)
        n = 0
        while True:
            c, _ = l.accept()
            n += 1
            c.sendall(b"conn %d\n" % n)
            c.close()
    elif verb == "same-sport":
        got, sport = [], 0
        t0 = time.time()
        for port in (int(a[0]), int(a[1])):
            s = socket.socket(socket.AF_INET)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("0.0.0.0", sport))
            sport = s.getsockname()[1]
            s.settimeout(20)
            t0 = time.time()
            try:
                s.connect((HOST, port))
                got.append(recv_all(s).decode().strip())
            except OSError as e:
                got.append(errno.errorcode.get(e.errno, str(e)))
            s.close()
        print("%d: %s | %s %.1f" % (sport, got[0], got[1], time.time() - t0))
    elif verb == "dns":
        dns(a[0], int(a[1]), a[2].lower(), a[3])
    elif verb == "hc-server":
        HalfClose.n, HalfClose.outf = int(a[1]), a[2]
        server(int(a[0]), HalfClose)
    elif verb == "hc-client":
        port, m = int(a[0]), int(a[1])
        with socket.create_connection((HOST, port), timeout=30) as s:
            got = recv_all(s)  # the server's half-close ends this
            data = os.urandom(m)
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            rest = recv_all(s)  # the server closing once it read everything
        print("ok got %d sha256 %s sent %d %s%s" % (len(got), hashlib.sha256(got).hexdigest(), m,
              hashlib.sha256(data).hexdigest(), " extra %d" % len(rest) if rest else ""))
    elif verb == "connect":
        t0 = time.monotonic()
        try:
            with socket.create_connection((a[0], int(a[1])), timeout=float(a[2]) if len(a) > 2 else 20):
                what = "ok"
        except socket.timeout:
            what = "timeout"
        except OSError as e:
            what = errno.errorcode.get(e.errno, str(e))
        print("%s %.3f" % (what, time.monotonic() - t0))
    elif verb == "udp-refused":
        s = socket.socket(socket.AF_INET6 if ":" in a[0] else socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((a[0], int(a[1])))
        s.settimeout(3)
        t0 = time.monotonic()
        what = "reply"
        try:
            s.send(b"anyone?")
            s.recv(100)
        except socket.timeout:
            what = "timeout"
        except OSError as e:
            what = errno.errorcode.get(e.errno, str(e))
        print("%s %.3f" % (what, time.monotonic() - t0))
    elif verb == "mss":
        with socket.create_connection((a[0], int(a[1])), timeout=20) as s:
            mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
            line = s.makefile().readline().strip()
        print(mss, line)
    elif verb == "probe":
        try:
            s = socket.create_connection((a[0], int(a[1])), timeout=10)
        except OSError as e:
            print("connect=%s" % errno.errorcode.get(e.errno, str(e)))
            return 0
        got, end = 0, "eof"
        try:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += len(b)
        except socket.timeout:
            end = "timeout"
        except OSError as e:
            end = errno.errorcode.get(e.errno, str(e))
        s.close()
        print("connect=ok got=%d end=%s" % (got, end))
    elif verb == "udp-rate":
        port, secs, window = int(a[0]), float(a[1]), int(a[2])
        s = socket.socket(socket.AF_INET6 if ":" in HOST else socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((HOST, port))
        s.settimeout(0.2)
        payload = b"r" * 64
        n, t0 = 0, time.monotonic()
        for _ in range(window):
            s.send(payload)
        while time.monotonic() - t0 < secs:
            try:
                s.recv(2048)
                n += 1
                s.send(payload)
            except socket.timeout:
                for _ in range(window):
                    s.send(payload)
            except OSError:
                time.sleep(0.01)
        print("%.0f" % (n / (time.monotonic() - t0)))
    elif verb == "count-server":
        server(int(a[0]), Count)
    elif verb == "count-client":
        port, n = int(a[0]), int(a[1])
        buf = b"c" * (1 << 20)
        with socket.create_connection((HOST, port), timeout=60) as s:
            left = n
            while left > 0:
                k = min(left, len(buf))
                s.sendall(buf[:k] if k < len(buf) else buf)
                left -= k
            s.shutdown(socket.SHUT_WR)
            print(recv_all(s).decode().strip())
    elif verb == "nft-delete-table":
        print(nft_delete_table(a[0], a[1]))
    elif verb == "nft-flush":
        print(nft_delete_table("all", ""))
    elif verb == "lo-listeners":
        with open("/proc/net/tcp") as f:
            for row in f.readlines()[1:]:
                local, st = row.split()[1], row.split()[3]
                ip, port = local.split(":")
                if st == "0A" and ip == "0100007F":
                    print(int(port, 16))
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
            s.sendto(a[1].encode(), (HOST, int(a[0])))
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
        with socket.create_connection((HOST, port), timeout=30) as s:
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
                socks.append((i, socket.create_connection((HOST, port), timeout=10)))
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
            s = socket.create_connection((HOST, port), timeout=30)
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
