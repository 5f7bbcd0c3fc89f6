#!/usr/bin/env python3
"""Loopback HTTP server for the nightly job's fail-closed tests.

Usage: guide_server.py GOOD_GUIDE_FILE. Binds 127.0.0.1 on a free port and prints it. Serves:
/good (the guide), /missing (404), /error (500 every time), /html (a login page), /empty (<tv/>),
/malformed (an unclosed tag), /truncated.gz (half of the gzipped guide), /reset (the connection
is reset mid-body), /redirect-file (302 to file:///etc/passwd), /slow (one byte a second). Stops when stdin closes or after 120 s.
"""
import gzip
import http.server
import socket
import struct
import sys
import threading

GOOD = open(sys.argv[1], 'rb').read()
GZ = gzip.compress(GOOD)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type='application/xml'):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path
        if path == '/good':
            self.reply(200, GOOD)
        elif path == '/error':
            self.reply(500, b'internal error', 'text/plain')
        elif path == '/html':
            self.reply(200, b'<!DOCTYPE html><html><body>Please log in</body></html>', 'text/html')
        elif path == '/empty':
            self.reply(200, b'<?xml version="1.0"?>\n<tv/>\n')
        elif path == '/malformed':
            self.reply(200, GOOD[: len(GOOD) // 2] + b'<title>unclosed\n</tv>\n')
        elif path == '/truncated.gz':
            self.reply(200, GZ[: len(GZ) // 2], 'application/gzip')
        elif path == '/reset':
            self.send_response(200)
            self.send_header('Content-Length', str(len(GOOD)))
            self.end_headers()
            self.wfile.write(GOOD[: len(GOOD) // 3])
            self.wfile.flush()
            # SO_LINGER 0 makes close() send an RST; every file object on the socket must go too.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            self.wfile.close()
            self.rfile.close()
            self.connection.close()
            self.close_connection = True
        elif path == '/redirect-file':
            self.send_response(302)
            self.send_header('Location', 'file:///etc/passwd')
            self.send_header('Content-Length', '0')
            self.end_headers()
        elif path == '/slow':
            # Headers, then a trickle far below any sane low-speed limit.
            self.send_response(200)
            self.send_header('Content-Length', str(len(GOOD)))
            self.end_headers()
            import time
            for i in range(20):
                try:
                    self.wfile.write(GOOD[i:i + 1])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
        else:
            self.reply(404, b'not found', 'text/plain')


def main():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    threading.Timer(120, server.shutdown).start()
    server.serve_forever()


if __name__ == '__main__':
    main()
