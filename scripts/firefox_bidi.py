"""A small WebDriver BiDi client for Debian's firefox-esr, which serves the protocol itself (no geckodriver).

Used by the browser checks (scripts/check-editor-firefox.py): start a headless Firefox on a fresh profile, open a
page, run script in it, and send real pointer and key input. Needs Debian's python3-websocket; run with
/usr/bin/python3 (scripts/bootstrap-browser.sh installs both).

    with Firefox() as firefox:
        firefox.navigate("http://127.0.0.1:8080/edit")
        firefox.evaluate("document.title")
        firefox.click(100, 120)
"""
import base64, json, os, re, shutil, subprocess, tempfile, time

import websocket


class BiDiError(RuntimeError):
    pass


class Firefox:
    def __init__(self, width=1400, height=900, timeout=60):
        self.width, self.height, self.timeout = width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="whereabouts-firefox-")
        self.process = None
        self.socket = None
        self.next_id = 0
        self.context = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        """Starts Firefox headless and opens a BiDi session on its first tab."""
        # Port 0: Firefox picks a free one and prints it, so nothing assumes a fixed port.
        self.log = open(os.path.join(self.profile, "firefox.log"), "w+")
        self.process = subprocess.Popen(
            ["firefox-esr", "--headless", "--no-remote", "--profile", self.profile, "--remote-debugging-port=0",
             "--width", str(self.width), "--height", str(self.height), "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT)
        url = self._wait_for_url()
        # Firefox refuses a WebSocket handshake that carries an Origin header (it guards against web pages).
        self.socket = websocket.create_connection(url + "/session", timeout=self.timeout, suppress_origin=True)
        self.call("session.new", {"capabilities": {}})
        tree = self.call("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]
        self.call("browsingContext.setViewport",
                  {"context": self.context, "viewport": {"width": self.width, "height": self.height}})

    def _wait_for_url(self):
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            self.log.seek(0)
            match = re.search(r"WebDriver BiDi listening on (ws://[0-9.:]+)", self.log.read())
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                raise BiDiError("firefox-esr exited with %s before serving BiDi" % self.process.returncode)
            time.sleep(0.1)
        raise BiDiError("firefox-esr did not serve BiDi within %s s" % self.timeout)

    def call(self, method, params):
        """Sends one command and returns its result; raises BiDiError with Firefox's message on an error."""
        self.next_id += 1
        wanted = self.next_id
        self.socket.send(json.dumps({"id": wanted, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") != wanted:
                continue  # an event
            if message.get("type") == "error":
                raise BiDiError("%s: %s: %s" % (method, message.get("error"), message.get("message")))
            return message["result"]

    def navigate(self, url):
        self.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def evaluate(self, expression, await_promise=True):
        """Runs `expression` in the page; returns its value as JSON-like Python (via JSON.stringify)."""
        result = self.call("script.evaluate", {
            "expression": "(async () => JSON.stringify(await (%s)))()" % expression,
            "target": {"context": self.context}, "awaitPromise": await_promise})
        if result.get("type") == "exception":
            raise BiDiError("script: %s" % result["exceptionDetails"].get("text"))
        value = result["result"].get("value")
        return None if value is None else json.loads(value)

    def wait_for(self, expression, seconds=10):
        """Waits until `expression` is truthy in the page; returns its value."""
        deadline = time.time() + seconds
        while True:
            value = self.evaluate(expression)
            if value or time.time() > deadline:
                return value
            time.sleep(0.1)

    def click(self, x, y):
        """A real left click at viewport coordinates (CSS pixels)."""
        self.call("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": int(round(x)), "y": int(round(y))},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def keys(self, text):
        """Types `text`; "\\ue007" is Enter, "\\ue00c" Escape (WebDriver's key codes)."""
        actions = []
        for character in text:
            actions += [{"type": "keyDown", "value": character}, {"type": "keyUp", "value": character}]
        self.call("input.performActions",
                  {"context": self.context, "actions": [{"type": "key", "id": "keyboard", "actions": actions}]})

    def screenshot(self, path):
        data = self.call("browsingContext.captureScreenshot", {"context": self.context})["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))

    def close(self):
        try:
            if self.socket:
                try:
                    self.call("session.end", {})
                except Exception:
                    pass
                self.socket.close()
        finally:
            if self.process and self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
