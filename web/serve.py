#!/usr/bin/env python3
"""A tiny local web server for graft's browser runtime: the sample page, the tests and the benchmark.

It serves directories under URL prefixes and, unless --no-isolation, sends the two headers that make a
page crossOriginIsolated (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy:
require-corp), without which a browser gives WebAssembly no shared memory and graft runs on one thread.

    python3 web/serve.py --mount /=samples/web --mount /graft/=build/web/web/dist --mount /models/=build/web-models

With --result FILE it is a test server: the page POSTs its JSON report to /__result, the server
writes it to FILE and exits 0 if the report says {"ok": true}, 1 otherwise, 2 when --timeout
seconds pass first. Lines POSTed to /__log are printed as they come (the page's progress).
Python's standard library only.
"""
import argparse
import http.server
import json
import os
import posixpath
import sys
import threading
import urllib.parse

MIME = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".bin": "application/octet-stream",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css",
    ".md": "text/markdown; charset=utf-8",
}


def make_handler(mounts, isolation, result):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: with Nagle's algorithm on, the second waits
        # for the browser's delayed ACK, 40 ms per response on a kept-alive connection.
        disable_nagle_algorithm = True

        def log_message(self, fmt, *args):  # quiet: only errors are worth a line
            if args and str(args[1]).startswith(("4", "5")):
                sys.stderr.write("serve: %s %s\n" % (self.path, args[1]))

        def headers_out(self, status, ctype, length):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(length))
            self.send_header("Cache-Control", "no-store")
            if isolation:
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
                self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
                self.send_header("Cross-Origin-Resource-Policy", "same-origin")
            self.end_headers()

        def resolve(self):
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            for prefix, root in mounts:
                if path == prefix.rstrip("/") and prefix != "/":
                    path += "/"
                if path.startswith(prefix):
                    rel = posixpath.normpath(path[len(prefix):]).lstrip("/")
                    if rel.startswith(".."):
                        return None
                    full = os.path.join(root, rel) if rel not in ("", ".") else root
                    if os.path.isdir(full):
                        full = os.path.join(full, "index.html")
                    return full
            return None

        def do_GET(self):
            full = self.resolve()
            if not full or not os.path.isfile(full):
                body = b"not found\n"
                self.headers_out(404, "text/plain", len(body))
                self.wfile.write(body)
                return
            size = os.path.getsize(full)
            self.headers_out(200, MIME.get(os.path.splitext(full)[1], "application/octet-stream"), size)
            with open(full, "rb") as f:
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    self.wfile.write(chunk)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            self.headers_out(200, "text/plain", 3)
            self.wfile.write(b"ok\n")
            if self.path == "/__log":
                sys.stdout.write(body.decode("utf-8", "replace").rstrip("\n") + "\n")
                sys.stdout.flush()
            elif self.path == "/__result" and result is not None:
                result["body"] = body
                result["done"].set()

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mount", action="append", default=[], metavar="PREFIX=DIR",
                    help="serve DIR under the URL prefix PREFIX (repeatable; longest prefix first)")
    ap.add_argument("--port", type=int, default=8000, help="0 picks a free port (printed on the first line)")
    ap.add_argument("--no-isolation", action="store_true", help="do not send COOP/COEP (graft then runs single-threaded)")
    ap.add_argument("--result", help="test mode: write the page's POSTed report here and exit")
    ap.add_argument("--timeout", type=float, default=300, help="test mode: seconds to wait for the report")
    ap.add_argument("--port-file", help="write the port chosen here once listening")
    a = ap.parse_args()

    mounts = []
    for m in a.mount or ["/=."]:
        prefix, _, d = m.partition("=")
        if not d or not prefix.startswith("/"):
            ap.error("--mount takes PREFIX=DIR with PREFIX starting with /, not %r" % m)
        if not os.path.isdir(d):
            ap.error("--mount %s: %s is not a directory" % (m, d))
        mounts.append((prefix if prefix.endswith("/") else prefix + "/", os.path.abspath(d)))
    mounts.sort(key=lambda m: -len(m[0]))

    result = {"done": threading.Event()} if a.result else None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(mounts, not a.no_isolation, result))
    server.daemon_threads = True
    port = server.server_address[1]
    print("serving on http://127.0.0.1:%d/ (%s)" % (port, "no COOP/COEP" if a.no_isolation else "COOP/COEP: crossOriginIsolated"),
          flush=True)
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.replace(tmp, a.port_file)
    if result is None:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        return 0

    threading.Thread(target=server.serve_forever, daemon=True).start()
    if not result["done"].wait(a.timeout):
        print("serve: no report after %g s" % a.timeout, file=sys.stderr)
        return 2
    tmp = a.result + ".tmp"
    with open(tmp, "wb") as f:
        f.write(result["body"])
    os.replace(tmp, a.result)
    try:
        report = json.loads(result["body"])
    except ValueError:
        print("serve: the report is not JSON", file=sys.stderr)
        return 1
    return 0 if report.get("ok") is True else 1


if __name__ == "__main__":
    sys.exit(main())
