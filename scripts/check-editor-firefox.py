#!/usr/bin/python3
"""The map editor's Firefox smoke test (issue 46): Debian's firefox-esr, driven through the WebDriver BiDi protocol it
serves itself (scripts/firefox_bidi.py), loads `whereabouts web --edit` on a copy of the demo map, draws a zone and an
agent with real clicks and keys, names the zone, saves, and checks the file: it passes `whereabouts map check`, holds
what was drawn, and the previous file is kept as .bak.

  bash scripts/bootstrap-browser.sh && swift build --product whereabouts && /usr/bin/python3 scripts/check-editor-firefox.py
"""
import json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from firefox_bidi import Firefox  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTER = "\ue007"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "whereabouts")
    work = tempfile.mkdtemp(prefix="check-editor-firefox-")
    path = os.path.join(work, "map.json")
    shutil.copy(os.path.join(ROOT, "maps", "demo-office.json"), path)
    with open(path, "rb") as handle:
        original = handle.read()
    server = subprocess.Popen([binary, "web", "--edit", path, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    failures = []

    def check(ok, text):
        print(("ok    " if ok else "FAIL  ") + text, flush=True)
        if not ok:
            failures.append(text)

    try:
        url = server.stdout.readline().split()[-1]
        with Firefox(width=1700, height=1100) as firefox:
            firefox.navigate(url)
            ready = firefox.wait_for("document.body.dataset.state === 'ready' && editor.state().checked", 20)
            check(bool(ready), "the editor loads in Firefox and checks the map")
            firefox.evaluate("editor.setView(40, 60, 880)")
            at = lambda x, y: firefox.evaluate("editor.screenOf(%s, %s)" % (x, y))
            # A zone over the corridor (free of zones on the demo's ground floor), closed with Enter and named.
            firefox.keys("z")
            for point in ([0, 8], [10, 8], [10, 10], [0, 10]):
                firefox.click(*at(*point))
            firefox.keys(ENTER)
            firefox.wait_for("document.querySelector('#panel input[data-field=\"name\"]') !== null")
            box = firefox.evaluate("(() => { const r = document.querySelector('#panel input[data-field=\"name\"]')"
                                   ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
            firefox.click(*box)
            firefox.evaluate("document.activeElement.select()")
            firefox.keys("Corridor" + ENTER)
            # An agent, then save.
            firefox.keys("a")
            firefox.click(*at(5, 9))
            saved = firefox.wait_for("editor.state().checked && editor.state().valid && "
                                     "!document.getElementById('save').disabled", 10)
            check(bool(saved), "the drawn map has no problem and the save button is enabled")
            box = firefox.evaluate("(() => { const r = document.getElementById('save').getBoundingClientRect(); "
                                   "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
            firefox.click(*box)
            hint = firefox.wait_for("document.getElementById('save-result').textContent.includes('systemctl') && "
                                    "document.getElementById('save-result').textContent", 10)
            check(bool(hint), f"saved, with the reload hint: {hint!r}")
            firefox.screenshot(os.path.join(work, "firefox.png"))
        with open(path) as handle:
            document = json.load(handle)
        zone = [z for z in document["zones"] if z["name"] == "Corridor"]
        agent = [a for a in document["agents"] if a["id"] == "agent-1"]
        check(zone == [{"floor": 1, "minor": 8, "name": "Corridor", "polygon": [[0, 8], [10, 8], [10, 10], [0, 10]]}]
              and agent == [{"id": "agent-1", "floor": 1, "x": 5, "y": 9, "z": 2.4}],
              f"the file holds the zone and the agent drawn: {zone} {agent}")
        result = subprocess.run([binary, "map", "check", path], capture_output=True, text=True)
        check(result.returncode == 0, "the saved map passes `whereabouts map check`")
        with open(path + ".bak", "rb") as handle:
            check(handle.read() == original, "the previous file is kept as .bak")
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print("firefox check passed" if not failures else f"firefox check FAILED: {len(failures)} checks", flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
