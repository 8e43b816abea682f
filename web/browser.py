"""Open a page in headless Chromium and wait for its report: what graft's browser tests
(web/test/run_browser_tests.py) and the browser benchmark (bench/web/run.py) share.

The page is served by web/serve.py in test mode; it POSTs its JSON report to /__result and its
progress lines to /__log (printed as they come).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Timeout(Exception):
    pass


def find_chromium(given=None):
    for c in [given, os.environ.get("GRAFT_CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
              shutil.which("google-chrome")]:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def open_page(chromium, mounts, page, isolation, timeout):
    """Serves `mounts` (["/prefix/=dir", ...]), opens `page` (a path) in a fresh headless Chromium and
    returns the report the page POSTs. Raises Timeout (with Chromium's log) when none comes."""
    work = tempfile.mkdtemp(prefix="graft-browser-")
    server = browser = None
    try:
        report = os.path.join(work, "report.json")
        port_file = os.path.join(work, "port")
        serve = [sys.executable, os.path.join(HERE, "serve.py"), "--port", "0", "--port-file", port_file,
                 "--result", report, "--timeout", str(timeout)]
        for m in mounts:
            serve += ["--mount", m]
        if not isolation:
            serve.append("--no-isolation")
        server = subprocess.Popen(serve)
        deadline = time.time() + 10
        while not os.path.isfile(port_file) and server.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if not os.path.isfile(port_file):
            raise RuntimeError("the page server did not start")
        url = "http://127.0.0.1:%s%s" % (open(port_file).read().strip(), page)
        log = open(os.path.join(work, "chromium.log"), "w")
        # As root Chromium needs --no-sandbox; the background-networking flags keep it from calling
        # out (the machine has no network); a fresh profile each time.
        browser = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
             "--user-data-dir=" + os.path.join(work, "profile"), url],
            stdout=subprocess.DEVNULL, stderr=log)
        rc = server.wait(timeout=timeout + 30)
        if rc == 2 or not os.path.isfile(report):
            log.flush()
            raise Timeout("no report from %s within %g s; the end of Chromium's log:\n%s"
                          % (page, timeout, open(os.path.join(work, "chromium.log")).read()[-4000:]))
        return json.load(open(report))
    finally:
        for p in (browser, server):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)
