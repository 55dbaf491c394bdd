"""A headless Chromium driven over the DevTools protocol on a pipe, for the rendered-page test.

No driver library: Chromium's own `--remote-debugging-pipe` reads NUL-terminated JSON commands on
file descriptor 3 and writes replies and events on descriptor 4. The page is loaded from a file
URL with networking, sync and component updates switched off, in a fresh profile directory.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--remote-debugging-pipe")


def find_browser() -> str | None:
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def need_browser() -> str:
    """The browser's path; without one, skip with the way to install it, except in CI, where
    `.ci/run` installs Debian's chromium and a missing browser is a failure (no silent skip)."""
    import pytest

    found = find_browser()
    if found is None:
        message = (f"no headless browser installed (looked for {', '.join(BINARIES)} on PATH); "
                   f"`apt-get install chromium` enables this test")
        if os.environ.get("CI"):
            pytest.fail(f"{message}; .ci/run installs it, so in CI this is a failure")
        pytest.skip(message)
    return found


class Browser:
    def __init__(self, binary: str, profile: Path, timeout: float = 120.0):
        commands_read, self._write = os.pipe()  # we write, Chromium reads on fd 3
        self._read, replies_write = os.pipe()  # Chromium writes on fd 4, we read

        def descriptors():  # in the child: the two pipe ends become 3 and 4
            a, b = os.dup(commands_read), os.dup(replies_write)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        # 3 and 4 kept too: the child closes other descriptors after
                                        # `descriptors` has put the pipe there
                                        pass_fds=tuple(sorted({3, 4, commands_read, replies_write})),
                                        preexec_fn=descriptors)
        os.close(commands_read)
        os.close(replies_write)
        self.deadline = time.monotonic() + timeout
        self.events: list[dict] = []
        self._buffer = b""
        self._next = 0

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:  # already gone: the wait below ends it either way
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)

    def _message(self) -> dict:
        while b"\0" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                raise TimeoutError("the browser did not answer in time")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise ConnectionError("the browser closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, event: str) -> dict:
        for seen in self.events:
            if seen.get("method") == event:
                return seen
        while True:
            message = self._message()
            self.events.append(message)
            if message.get("method") == event:
                return message


def render(binary: str, page: Path, profile: Path, width: int = 1400, height: int = 1000) -> dict:
    """Open `page`, and return what a reader would see: each figure's SVG box, the text length,
    the resources fetched, the console and log errors, and PNG screenshots of the page and of
    each figure."""
    browser = Browser(binary, profile)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable", session=session)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        browser.call("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired")
        probe = ("JSON.stringify({figures: [...document.querySelectorAll('figure')].map(f => {"
                 "const s = f.querySelector('svg'); const r = s ? s.getBoundingClientRect() : null;"
                 "return {id: f.id, svg: !!s, x: r && r.x + window.scrollX, y: r && r.y + window.scrollY,"
                 "width: r && r.width, height: r && r.height}; }),"
                 "text: document.body.innerText.length,"
                 # horizontal overflow: the page's width beside the viewport's, and what sticks out
                 "scroll_width: document.documentElement.scrollWidth, viewport: window.innerWidth,"
                 "wider: [...document.querySelectorAll('table, pre, figure, svg')].filter(e => "
                 "e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => "
                 "(e.closest('section') || e).id + ' ' + e.tagName + ' ' + Math.round(e.getBoundingClientRect().right)),"
                 # a section scrolling sideways inside the page (overflow-x: auto) counts too
                 "scrolling: [...document.querySelectorAll('section')].filter(e => e.scrollWidth > e.clientWidth + 1)"
                 ".map(e => e.id + ' ' + e.scrollWidth + ' > ' + e.clientWidth),"
                 "resources: performance.getEntriesByType('resource').map(e => e.name),"
                 # a word of a table cell laid out over two lines (broken mid-word)
                 "broken: [...document.querySelectorAll('td, th')].flatMap(cell => {"
                 "const out = []; const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);"
                 "for (let n = walk.nextNode(); n; n = walk.nextNode()) { const re = /\\S+/g; let m;"
                 "while ((m = re.exec(n.data))) { const r = document.createRange(); r.setStart(n, m.index);"
                 "r.setEnd(n, m.index + m[0].length); const tops = new Set([...r.getClientRects()]"
                 ".filter(b => b.width > 0).map(b => Math.round(b.top)));"
                 "if (tops.size > 1) out.push((cell.closest('table') || cell).id + ': ' + m[0]); } } return out; }),"
                 # text drawn smaller than 10 px: figure labels (SVG text scaled with its figure) and page text
                 "small: [...document.querySelectorAll('svg text')].map(t => ({t: t.textContent.trim(),"
                 "px: parseFloat(getComputedStyle(t).fontSize) * (t.getScreenCTM() ? Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b) : 1),"
                 "fig: (t.closest('figure') || {}).id || ''})).concat([...document.querySelectorAll('td, th, p, li, caption, "
                 "figcaption')].map(e => ({t: e.textContent.trim().slice(0, 30), px: parseFloat(getComputedStyle(e)"
                 ".fontSize), fig: (e.closest('table') || e.closest('section') || e).id})))"
                 ".filter(x => x.t && x.px < 10).map(x => x.fig + ': ' + x.t + ' ' + x.px.toFixed(1) + 'px')})")
        seen = json.loads(browser.call("Runtime.evaluate", {"expression": probe, "returnByValue": True},
                                       session=session)["result"]["value"])
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)
        seen["screenshot"] = base64.b64decode(shot["data"])
        seen["figure_shots"] = {}
        for fig in seen["figures"]:
            if fig["svg"] and fig["width"] and fig["height"]:
                clip = {"x": fig["x"], "y": fig["y"], "width": fig["width"], "height": fig["height"], "scale": 1}
                data = browser.call("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                               "captureBeyondViewport": True}, session=session)
                seen["figure_shots"][fig["id"]] = base64.b64decode(data["data"])
        seen["errors"] = [e for e in browser.events if _is_error(e)]
        return seen
    finally:
        browser.close()


def _is_error(event: dict) -> bool:
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.exceptionThrown":
        return True
    if method == "Runtime.consoleAPICalled":
        return params.get("type") in ("error", "assert")
    if method == "Log.entryAdded":
        return params.get("entry", {}).get("level") == "error"
    return False
