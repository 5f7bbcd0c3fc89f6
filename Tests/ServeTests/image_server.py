#!/usr/bin/env python3
"""Loopback stand-in for the logo and picture hosts a guide names (Tests/ServeTests/GuideTests.swift).

Binds 127.0.0.1 on a free port, prints the port, and answers GET /logo/NAME.png with an 80x60 PNG
and /picture/NAME.png with a 320x180 one, each of a colour derived from NAME (so that screenshots
show them), anything else with 404. Counts hits per path (GET /hits answers "PATH COUNT" lines).
Stops when its standard input closes or after 600 s.
"""
import hashlib
import http.server
import os
import struct
import sys
import threading
import zlib

hits = {}
lock = threading.Lock()


def png(width, height, name):
    digest = hashlib.sha256(name.encode()).digest()
    background, stripe = digest[0:3], bytes(255 - b for b in digest[0:3])
    rows = b""
    for y in range(height):
        band = height // 3 <= y < 2 * height // 3
        rows += b"\x00" + (stripe if band else background) * width

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/hits":
            with lock:
                body = "".join(f"{path} {count}\n" for path, count in sorted(hits.items())).encode()
            self.answer(200, "text/plain", body)
            return
        with lock:
            hits[self.path] = hits.get(self.path, 0) + 1
        if self.path.startswith("/logo/") and self.path.endswith(".png"):
            self.answer(200, "image/png", png(80, 60, self.path))
        elif self.path.startswith("/picture/") and self.path.endswith(".png"):
            self.answer(200, "image/png", png(320, 180, self.path))
        elif self.path.startswith("/script/"):
            self.answer(200, "image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
        else:
            self.answer(404, "text/plain", b"no such image\n")

    def answer(self, status, kind, body):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
timer = threading.Timer(600, lambda: os._exit(0))
timer.daemon = True
timer.start()
sys.stdin.read()
server.shutdown()
