#!/usr/bin/env python3
"""Loopback HTTP server for FetchTests.

Binds 127.0.0.1 on a free port, prints the port on stdout, and serves one scenario per first path
segment (/plain/..., /flaky/...). Hits are counted per full path, so each test uses its own path.
Stops when its standard input closes (the test process ended) or after 120 s, whichever is first.
"""
import gzip
import http.server
import os
import socket
import struct
import sys
import threading
import time

GUIDE = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
         b'<tv generator-info-name="fetch-tests">\n'
         b'  <channel id="one.test"><display-name>One</display-name></channel>\n'
         b'</tv>\n')
ETAG = '"guide-v1"'
LAST_MODIFIED = 'Wed, 01 Jan 2025 00:00:00 GMT'
HTML = b'<!DOCTYPE html>\n<html><head><title>Login</title></head><body>Please log in</body></html>\n'

hits = {}
hits_lock = threading.Lock()


def big_guide(size):
    head = b'<?xml version="1.0"?>\n<tv>\n<!-- '
    tail = b' -->\n</tv>\n'
    return head + b'x' * (size - len(head) - len(tail)) + tail


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def do_GET(self):
        with hits_lock:
            hits[self.path] = hits.get(self.path, 0) + 1
            hit = hits[self.path]
        scenario = self.path.strip('/').split('/')[0].replace('-', '_')
        getattr(self, 'scenario_' + scenario, self.scenario_missing)(hit)

    def reply(self, status, body=b'', content_type='application/xml', headers=()):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def reset_connection(self):
        # SO_LINGER with a zero timeout makes close() send an RST instead of a FIN.
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
        self.connection.close()
        self.close_connection = True

    # Scenarios, by first path segment.

    def scenario_hits(self, hit):
        # /hits/<path>: how often <path> was requested, as a tiny XMLTV document so that the
        # tests can read it with the Fetcher itself.
        path = self.path[len('/hits'):]
        with hits_lock:
            count = hits.get(path, 0)
        self.reply(200, b'<tv hits="%d"/>' % count)

    def scenario_plain(self, hit):
        self.reply(200, GUIDE)

    def scenario_html(self, hit):
        self.reply(200, HTML, 'text/html; charset=utf-8')

    def scenario_gzip_encoding(self, hit):
        if 'gzip' not in self.headers.get('Accept-Encoding', ''):
            self.reply(400, b'client did not offer gzip', 'text/plain')
            return
        self.reply(200, gzip.compress(GUIDE), headers=[('Content-Encoding', 'gzip')])

    def scenario_gz_file(self, hit):
        self.reply(200, gzip.compress(GUIDE), 'application/gzip')

    def scenario_etag(self, hit):
        if self.headers.get('If-None-Match') == ETAG:
            self.reply(304, headers=[('ETag', ETAG)])
        else:
            self.reply(200, GUIDE, headers=[('ETag', ETAG)])

    def scenario_last_modified(self, hit):
        if self.headers.get('If-Modified-Since') == LAST_MODIFIED:
            self.reply(304)
        else:
            self.reply(200, GUIDE, headers=[('Last-Modified', LAST_MODIFIED)])

    def scenario_missing(self, hit):
        self.reply(404, b'not here', 'text/plain')

    def scenario_flaky(self, hit):
        if hit == 1:
            self.reply(500, b'oops', 'text/plain')
        else:
            self.reply(200, GUIDE)

    def scenario_busy(self, hit):
        if hit == 1:
            self.reply(429, b'slow down', 'text/plain', headers=[('Retry-After', '1')])
        else:
            self.reply(200, GUIDE)

    def scenario_busy_long(self, hit):
        self.reply(503, b'come back tomorrow', 'text/plain', headers=[('Retry-After', '3600')])

    def scenario_reset(self, hit):
        self.send_response(200)
        self.send_header('Content-Type', 'application/xml')
        self.send_header('Content-Length', '100000')
        self.end_headers()
        self.wfile.write(big_guide(100000)[:5000])
        self.reset_connection()

    def scenario_short(self, hit):
        # Closes cleanly (FIN) before the announced length.
        self.send_response(200)
        self.send_header('Content-Length', '100000')
        self.end_headers()
        self.wfile.write(big_guide(100000)[:5000])
        self.wfile.flush()
        self.close_connection = True

    def scenario_big(self, hit):
        self.reply(200, big_guide(2 * 1024 * 1024))

    def scenario_big_unsized(self, hit):
        # No Content-Length: only the byte counter can stop it.
        self.send_response(200)
        self.send_header('Content-Type', 'application/xml')
        self.send_header('Connection', 'close')
        self.end_headers()
        self.close_connection = True
        try:
            self.wfile.write(big_guide(2 * 1024 * 1024))
        except OSError:
            pass

    def scenario_redirect_file(self, hit):
        self.reply(302, b'', 'text/plain', headers=[('Location', 'file:///etc/passwd')])

    def scenario_redirect_loop(self, hit):
        self.reply(302, b'', 'text/plain', headers=[('Location', self.path)])

    def scenario_redirect_ok(self, hit):
        self.reply(301, b'moved', 'text/plain', headers=[('Location', '/plain/after-redirect')])

    def scenario_slow(self, hit):
        self.send_response(200)
        self.send_header('Content-Type', 'application/xml')
        self.send_header('Content-Length', '100000')
        self.end_headers()
        try:
            self.wfile.write(b'<?xml version="1.0"?>\n<tv>')
            for _ in range(40):
                self.wfile.flush()
                time.sleep(0.25)
                self.wfile.write(b' ')
        except OSError:
            pass
        self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the reset and slow scenarios end in broken connections on purpose


def main():
    server = Server(('127.0.0.1', 0), Handler)
    print(server.server_address[1], flush=True)

    def stop_when_parent_goes():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=stop_when_parent_goes, daemon=True).start()
    threading.Timer(120, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == '__main__':
    main()
