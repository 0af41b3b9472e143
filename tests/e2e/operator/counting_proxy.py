#!/usr/bin/env python3
"""A forward proxy that forwards nothing: it records the first line of every request it gets
(CONNECT host:port, or GET http://...) to LOG, one per line, answers 502 and closes. It writes
the port it listens on (127.0.0.1, chosen by the kernel) to PORTFILE.

  counting_proxy.py LOG PORTFILE
"""
import os
import socket
import sys
import threading


def serve(conn, log, lock):
    with conn:
        conn.settimeout(10)
        data = b""
        try:
            while b"\r\n" not in data and len(data) < 8192:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        with lock:
            log.write(line + "\n")
            log.flush()
        try:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass


def main():
    log = open(sys.argv[1], "a", encoding="latin-1")
    lock = threading.Lock()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, log, lock), daemon=True).start()


if __name__ == "__main__":
    main()
