"""A page as a person sees it at a given width, measured in headless Chromium: the page is
loaded with the network off in one browser kept for many pages (``Browser``), and a probe
script evaluated in it once it has loaded.

What the probe reports (after the load event, so images and the page's own scripts are in,
with every <details> opened):
- ``overflowing``: a cell past the right edge of the viewport (outside a scrolling wrapper),
  a cell whose content is wider than the cell, a scrolling wrapper past the viewport, or a
  page wider than the viewport;
- ``scrolled``: cells past the viewport inside a scrolling wrapper (allowed for a matrix);
- ``overlaps``: two panes (grid panes, tables, plots, scrolling wrappers) that overlap;
- ``splits``: a header cell whose text breaks between two lines inside a token (between two
  characters of one name, not after a separator such as ``_``)."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PROBE = r"""(function () {
  var W = window.innerWidth, out = {width: W, overflowing: [], scrolled: [], overlaps: [], splits: []};
  Array.prototype.forEach.call(document.querySelectorAll('details'), function (d) { d.open = true; });
  function label(el) {
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '') + ' "' + (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50) + '"';
  }
  function scroller(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') { return p; }
    }
    return null;
  }
  function shown(el) { return el.getClientRects().length > 0; }
  if (document.documentElement.scrollWidth > W + 1) {
    out.overflowing.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
  }
  Array.prototype.forEach.call(document.querySelectorAll('td, th'), function (c) {
    if (!shown(c)) { return; }
    var r = c.getBoundingClientRect(), box = scroller(c);
    if (r.right > W + 1) { (box ? out.scrolled : out.overflowing).push(label(c) + ' ends at ' + Math.round(r.right)); }
    if (c.scrollWidth > c.clientWidth + 1) {
      out.overflowing.push(label(c) + ' holds ' + c.scrollWidth + ' px in ' + c.clientWidth);
    }
  });
  Array.prototype.forEach.call(document.querySelectorAll('.scroll, .wrap'), function (b) {
    if (shown(b) && b.getBoundingClientRect().right > W + 1) { out.overflowing.push('wrapper ' + label(b)); }
  });
  var panes = Array.prototype.filter.call(
    document.querySelectorAll('.grid > *, table, img, .scroll, .wrap, svg'),
    function (el) { return shown(el) && !(el.tagName === 'TABLE' && el.parentElement.closest('table')) && !el.closest('td, th'); });
  for (var i = 0; i < panes.length; i++) {
    for (var j = i + 1; j < panes.length; j++) {
      var a = panes[i], b = panes[j];
      if (a.contains(b) || b.contains(a)) { continue; }
      var p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
      var w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      var h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (w > 1 && h > 1) { out.overlaps.push(label(a) + ' overlaps ' + label(b)); }
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll('tr'), function (row) {
    if (row.querySelector('td') || !shown(row)) { return; }  // header rows only: every cell a th
    Array.prototype.forEach.call(row.querySelectorAll('th'), function (th) {
      var walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node;
      while ((node = walk.nextNode())) {
        var text = node.data, prev = null;
        for (var k = 0; k < text.length; k++) {
          var range = document.createRange();
          range.setStart(node, k); range.setEnd(node, k + 1);
          var rects = range.getClientRects();
          if (!rects.length || /\s/.test(text[k])) { prev = null; continue; }
          var top = rects[0].top;
          if (prev !== null && top > prev.top + 2 && !/[\s_\/:@\-·,(]/.test(text[k - 1])) {
            out.splits.push(text.slice(0, k) + ' | ' + text.slice(k));
          }
          prev = {top: top};
        }
      }
    });
  });
  return out;
})()
"""


def chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        raise AssertionError("headless Chromium is needed (apt-get install chromium)")
    return exe


class Browser:
    """One headless Chromium for many pages, with the network off (``unshare --net``), driven
    over the DevTools protocol on two pipes (``--remote-debugging-pipe``: it reads commands
    on descriptor 3 and answers on 4, each message JSON ended by a NUL). A page is loaded at
    a width (the viewport ``width`` × 1000), and then shot, dumped or probed, as a launch of
    Chromium per page did before at a second or two each."""

    def __init__(self, profile: Path):
        to_r, self._to = _high(os.pipe())  # commands: we write, Chromium reads on 3
        self._from, from_w = _high(os.pipe())  # answers and events: Chromium writes on 4
        # posix_spawn, not a fork: safe in a test process with threads; every other
        # descriptor of this process is close-on-exec (Python's default)
        self.pid = os.posix_spawn(
            shutil.which("unshare") or "/usr/bin/unshare",
            [
                "unshare",
                "--net",
                chromium(),
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, to_r, 3),
                (os.POSIX_SPAWN_DUP2, from_w, 4),
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
        )
        os.close(to_r)
        os.close(from_w)
        self._buf, self._n, self._events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable", session=self.session)

    def _message(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"Chromium said nothing for {timeout} s")
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise AssertionError(f"Chromium ended (wait status {self._wait(10)})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: str | None = None, timeout: float = 60, **params):
        """Send one command and wait for its answer (events meanwhile are kept)."""
        self._n += 1
        msg = {"id": self._n, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to, json.dumps(msg).encode() + b"\0")
        while True:
            got = self._message(timeout)
            if got.get("id") == self._n:
                if "error" in got:
                    raise AssertionError(f"{method}: {got['error']}")
                return got.get("result", {})
            self._events.append(got)

    def load(self, page: Path, width: int) -> None:
        """``page`` loaded (its load event fired: images and its own scripts are in) in a
        viewport ``width`` × 1000."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=self.session,
            width=width,
            height=1000,
            deviceScaleFactor=1,
            mobile=False,
        )
        self._events.clear()
        self.call("Page.navigate", session=self.session, url=page.as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._message(60))

    def evaluate(self, expression: str):
        got = self.call(
            "Runtime.evaluate", session=self.session, expression=expression, returnByValue=True
        )
        assert "exceptionDetails" not in got, got
        return got["result"].get("value")

    def dom(self) -> str:
        """The loaded page's DOM as Chromium's --dump-dom prints it."""
        return self.evaluate("document.documentElement.outerHTML")

    def shot(self, path: Path) -> None:
        """The viewport as a PNG, as Chromium's --screenshot writes it."""
        data = self.call("Page.captureScreenshot", session=self.session, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def _wait(self, timeout: float) -> int | None:
        """The browser's wait status once it ended within ``timeout`` s (else None)."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return status
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def close(self) -> None:
        with contextlib.suppress(OSError, AssertionError):
            self.call("Browser.close", timeout=10)
        os.close(self._to)
        if self._wait(30) is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self._from)


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """A pipe's two ends moved to descriptors of 10 and up (close-on-exec), so that putting
    them at 3 and 4 in the child never overwrites one with the other."""
    out = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return out[0], out[1]


def measure(browser: Browser, page: Path, width: int, shot: Path | None = None) -> dict:
    """What the probe found on ``page`` at ``width`` px (and a screenshot of it, taken
    before the probe opens the page's <details>)."""
    browser.load(page, width)
    if shot is not None:
        browser.shot(shot)
    found = browser.evaluate(PROBE)
    assert found["width"] == width, found  # the viewport is the width asked for
    return found
