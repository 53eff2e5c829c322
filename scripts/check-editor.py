#!/usr/bin/python3
"""The map editor's browser check (issue 46): Debian's headless chromium, driven by python3-selenium with real pointer
and key input, against `whereabouts web --edit` started here on a copy of a map on a free port.

  1. draw: the demo office's ground floor (maps/demo-office.json, the floor with the lowest major), from a plan
     picture of it (the floor drawn by `whereabouts render` as SVG): upload the picture, scale it by two clicked
     points and a typed distance, drag it into place, then draw the outline, the zones (named in the side panel; minors
     given by the editor), the walls (losses from the material presets or typed), the agents (ids typed), a second
     floor (added, named) and the stairs, with an undo/redo round on the way; save. The saved map passes
     `whereabouts map check` and equals the demo's ground floor as drawn (the picture's placement within 1 mm);
     the previous file is kept as .bak;
  2. invalid: an agent dragged out of the floor, a zone drawn over another and a wall given 99 dB: every problem
     `map check` finds in the page's text is listed and marked at its place on the drawing, the save button is
     disabled and a save posted anyway is refused (422) with the file untouched; undoing the three edits makes the
     map valid again and saving it changes nothing;
  3. round trip: the demo map, loaded and saved untouched (and after an edit and its undo), keeps every byte;
  4. token: on a non-loopback address of this machine (`hostname -I`), writes without the token printed at start
     are refused (403) and the page says it is read-only; with the token they are taken.
Prints one line per check; exit status 0 when all pass, 1 otherwise.

  bash scripts/bootstrap-browser.sh && swift build --product whereabouts && /usr/bin/python3 scripts/check-editor.py
"""
import argparse, json, os, subprocess, sys, tempfile, time, urllib.error, urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = {3: "3", 6: "6", 12: "12", 2: "2"}  # wall losses the material menu offers
failures = []


SHOTS = None  # --screenshots DIR: the steps a person sees, saved as PNGs for docs/ (docs/editor.md)


def shot(browser, name):
    if SHOTS:
        browser.save_screenshot(os.path.join(SHOTS, name + ".png"))


def check(ok, text):
    print(("ok    " if ok else "FAIL  ") + text, flush=True)
    if not ok:
        failures.append(text)
    return ok


class Editor:
    """`whereabouts web --edit MAP` on a free port; its address and token from what it prints."""

    def __init__(self, binary, map_path, host="127.0.0.1"):
        self.log = open(map_path + ".log", "w")
        self.process = subprocess.Popen([binary, "web", "--edit", map_path, "--listen", host + ":0"],
                                        stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if "token=" not in line:
            raise RuntimeError("the editor did not start: " + line)
        self.url = line.split()[-1]
        self.base, self.token = self.url.split("/edit?token=")

    def request(self, method, path, body=b"", token=None):
        url = self.base + path + (("&" if "?" in path else "?") + "token=" + token if token else "")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=body or None, method=method), timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def stop(self):
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


class Page:
    """The editor's page in chromium, driven by pointer and key actions at plan coordinates."""

    def __init__(self, driver, url):
        self.driver = driver
        driver.get(url)
        self.wait("return document.body.dataset.state === 'ready' && window.editor.state().checked", 20)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, script, seconds=10, *args):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.js(script, *args):
                return True
            time.sleep(0.05)
        return False

    def state(self):
        return self.js("return editor.state()")

    def document(self):
        return self.js("return editor.document()")

    def settle(self):
        """Waits for the debounced check of the latest change to come back."""
        time.sleep(0.05)
        return self.wait("return editor.state().checked", 10)

    def actions(self):
        return ActionBuilder(self.driver)

    def screen(self, x, y):
        return self.js("return editor.screenOf(arguments[0], arguments[1])", x, y)

    def click_screen(self, point):
        actions = self.actions()
        actions.pointer_action.move_to_location(int(round(point[0])), int(round(point[1])))
        actions.pointer_action.click()
        actions.perform()

    def click(self, x, y):
        self.click_screen(self.screen(x, y))

    def drag_screen(self, start, end):
        actions = self.actions()
        actions.pointer_action.move_to_location(int(round(start[0])), int(round(start[1])))
        actions.pointer_action.pointer_down()
        for step in (0.25, 0.5, 0.75, 1.0):
            actions.pointer_action.move_to_location(int(round(start[0] + step * (end[0] - start[0]))),
                                                    int(round(start[1] + step * (end[1] - start[1]))))
        actions.pointer_action.pointer_up()
        actions.perform()

    def key(self, *keys):
        ActionChains(self.driver).send_keys(*keys).perform()

    def ctrl(self, key):
        ActionChains(self.driver).key_down(Keys.CONTROL).send_keys(key).key_up(Keys.CONTROL).perform()

    def type_into(self, selector, text):
        """Clicks a field, selects what it holds and types over it, then Enter (which commits it)."""
        self.driver.find_element(By.CSS_SELECTOR, selector).click()
        ActionChains(self.driver).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL) \
            .send_keys(str(text)).send_keys(Keys.ENTER).perform()
        self.settle()


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1900,1250", "--hide-scrollbars"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def map_check(binary, path):
    result = subprocess.run([binary, "map", "check", path], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def ground_floor(demo):
    """The demo's lowest floor and what stands on it, and a map of that alone (to draw the plan picture from)."""
    major = min(floor["major"] for floor in demo["floors"])
    on = lambda key: [element for element in demo.get(key, []) if element.get("floor") == major]
    alone = {"site": demo["site"], "floors": [f for f in demo["floors"] if f["major"] == major],
             "zones": on("zones"), "agents": on("agents"), "walls": on("walls")}
    return major, alone


def draw(binary, browser, work, demo):
    """Check 1: the demo's ground floor drawn from its plan picture; returns the saved map's path and its editor."""
    major, alone = ground_floor(demo)
    floor = alone["floors"][0]
    with open(os.path.join(work, "ground-alone.json"), "w") as handle:
        json.dump(alone, handle, indent=2)
    picture = os.path.join(work, "ground-floor.svg")
    subprocess.run([binary, "render", "--map", os.path.join(work, "ground-alone.json"), "--out", picture], check=True)
    # The renderer's frame for a lone floor: 30 px per metre, the outline's top-left corner at (40, 64).
    xs = [p[0] for p in floor["outline"]]
    ys = [p[1] for p in floor["outline"]]
    pixel = lambda x, y: (40 + 30 * (x - min(xs)), 64 + 30 * (max(ys) - y))
    start = {"site": demo["site"], "model": demo["model"],
             "floors": [{"major": major, "name": floor["name"], "height": floor.get("height", 0),
                         "outline": [[0, 0], [10, 0], [10, 10], [0, 10]]}], "agents": []}
    path = os.path.join(work, "drawn.json")
    start_text = json.dumps(start, indent=2) + "\n"
    with open(path, "w") as handle:
        handle.write(start_text)
    editor = Editor(binary, path)
    page = Page(browser, editor.url)

    # The plan picture: upload, scale by two of its corners 30 m apart, drag a corner onto the plan's origin.
    browser.find_element(By.ID, "underlay-file").send_keys(picture)
    page.wait("return document.body.dataset.underlay === 'ground-floor.svg' && "
              "editor.document().floors[0].underlay !== undefined", 15)
    width = max(xs) - min(xs)
    page.key("k")
    page.click_screen(page.js("return editor.imageToScreen(...arguments)", *pixel(min(xs), min(ys))))
    page.click_screen(page.js("return editor.imageToScreen(...arguments)", *pixel(max(xs), min(ys))))
    page.wait("return document.activeElement.id === 'calibrate-distance'")
    page.key(str(width), Keys.ENTER)
    page.settle()
    page.key("m")
    page.drag_screen(page.js("return editor.imageToScreen(...arguments)", *pixel(min(xs), min(ys))),
                     page.screen(min(xs), min(ys)))
    page.settle()
    underlay = page.document()["floors"][0]["underlay"]
    expected_underlay = {"file": "ground-floor.svg", "origin": [min(xs) - 40 / 30, max(ys) + 64 / 30],
                         "scale": 1 / 30, "rotation": 0}
    placed = (abs(underlay["scale"] - 1 / 30) < 1e-6 and underlay["rotation"] == 0 and
              all(abs(a - b) < 1e-3 for a, b in zip(underlay["origin"], expected_underlay["origin"])))
    check(placed, f"plan picture uploaded, scaled by two points and 30 m typed, dragged into place: {underlay}")
    shot(browser, "editor-step-1-plan-placed")
    page.js("editor.setView(40, 60, 880)")  # 40 px per metre, whole pixels: every 5 cm grid point is a pixel

    # The outline, then each zone (closed by clicking its first corner or by Enter) with its name typed.
    page.key("o")
    for point in floor["outline"]:
        page.click(*point)
    page.key(Keys.ENTER)
    page.settle()
    zones = [zone for zone in demo["zones"] if zone["floor"] == major]
    for number, zone in enumerate(zones):
        page.key("z")
        for point in zone["polygon"]:
            page.click(*point)
        if number % 2:
            page.key(Keys.ENTER)
        else:
            page.click(*zone["polygon"][0])
        page.settle()
        page.type_into('#panel input[data-field="name"]', zone["name"])
    shot(browser, "editor-step-2-zones-drawn")
    # Walls: the loss from the material menu when it offers it, typed otherwise; Escape ends each chain.
    page.key("w")
    for wall in alone["walls"]:
        if wall["loss"] in PRESETS:
            Select(browser.find_element(By.ID, "wall-material")).select_by_value(PRESETS[wall["loss"]])
        else:
            page.type_into("#wall-loss", wall["loss"])
        page.click(*wall["from"])
        page.click(*wall["to"])
        page.key(Keys.ESCAPE)
    page.settle()
    # Agents: placed, then their ids typed.
    for agent in alone["agents"]:
        page.key("a")
        page.click(agent["x"], agent["y"])
        page.settle()
        page.type_into('#panel input[data-field="id"]', agent["id"])
    # Undo and redo: an agent placed, deleted, the deletion undone, both undone, then redone once and deleted.
    count = lambda: len(page.document()["agents"])
    before = count()
    page.click(5, 5)
    page.key(Keys.DELETE)
    after_delete = count()
    page.ctrl("z")
    restored = count()
    page.ctrl("z")
    gone = count()
    page.ctrl("y")
    redone = count()
    page.key(Keys.DELETE)
    check((after_delete, restored, gone, redone, count()) == (before, before + 1, before, before + 1, before),
          f"undo/redo with Ctrl+Z, Ctrl+Y and Delete: {before} agents, {after_delete}, {restored}, {gone}, {redone}, "
          f"{count()}")
    # The floor above, named, and the stairs that join them.
    others = [f for f in demo["floors"] if f["major"] != major]
    upper = min(others, key=lambda f: f["major"])
    browser.find_element(By.ID, "add-floor").click()
    page.settle()
    page.type_into('#panel input[data-field="floor.name"]', upper["name"])
    page.type_into('#panel input[data-field="floor.height"]', upper["height"])
    browser.find_element(By.CSS_SELECTOR, f'#floor-tabs button[data-floor="{major}"]').click()
    page.js("editor.setView(40, 60, 880)")
    page.key("s")
    stairs = [s for s in demo.get("stairs", []) if major in s["floors"]]
    for s in stairs:
        page.click(s["x"], s["y"])
    page.settle()

    state = page.state()
    shot(browser, "editor-step-3-floor-drawn")
    check(state["valid"] and not state["problems"], f"the drawn map has no problem {state['problems'][:3]}")
    page.wait("return !document.getElementById('save').disabled", 5)
    browser.find_element(By.ID, "save").click()
    page.wait("return document.getElementById('save-result').textContent.includes('systemctl reload')", 10)
    hint = browser.find_element(By.ID, "save-result").text
    check("systemctl reload whereabouts-locator" in hint and "kill -HUP" in hint, f"save says how to reload: {hint!r}")

    status, output = map_check(binary, path)
    check(status == 0, f"the saved map passes `whereabouts map check`: {output.strip().splitlines()[:2]}")
    with open(path) as handle:
        saved = json.load(handle)
    got_underlay = saved["floors"][0].pop("underlay", None)
    expected = dict(start, zones=zones, walls=alone["walls"], agents=alone["agents"], stairs=stairs, floors=[
        {"major": major, "name": floor["name"], "height": floor.get("height", 0), "outline": floor["outline"]},
        {"major": upper["major"], "name": upper["name"], "height": upper["height"], "outline": floor["outline"]}])
    differences = [key for key in set(expected) | set(saved) if expected.get(key) != saved.get(key)]
    check(not differences, f"the saved map equals the demo's ground floor as drawn (differs in: {differences})")
    check(got_underlay is not None and got_underlay["file"] == "ground-floor.svg" and
          abs(got_underlay["scale"] - 1 / 30) < 1e-6 and
          all(abs(a - b) < 1e-3 for a, b in zip(got_underlay["origin"], expected_underlay["origin"])),
          f"the map names the picture and its placement: {got_underlay}")
    with open(path + ".bak") as handle:
        check(handle.read() == start_text, "the previous file is kept as .bak, byte for byte")
    check(os.path.exists(os.path.join(work, "ground-floor.svg")), "the picture is stored beside the map")
    more_tools(page)
    site_panel(page)
    return path, editor, page


def site_panel(page):
    """With nothing selected, the side panel sets the site's name and UUID, the model's power and a known tag: valid,
    in the document as typed, then all undone."""
    before = page.document()
    page.key("v")
    page.click(-0.5, -0.5)  # outside the floor: nothing selected, the floor's and the site's panel
    # With nothing selected, the outline's corners are handles: drag the far corner 1 m north.
    outline = before["floors"][0]["outline"]
    corner = max(outline, key=lambda p: p[0] + p[1])
    page.drag_screen(page.screen(*corner), page.screen(corner[0], corner[1] + 1))
    page.settle()
    dragged = page.document()["floors"][0]["outline"]
    moved = [p for p in dragged if p not in outline]
    check(moved == [[corner[0], corner[1] + 1]] and page.state()["valid"],
          f"with nothing selected, an outline corner is dragged: {corner} -> {moved}")
    uuid = "0c1b2a39-4857-4666-8a9b-aabbccddeeff"
    page.type_into('#panel input[data-field="site.name"]', "Head office")
    page.type_into('#panel input[data-field="site.uuid"]', uuid)
    page.type_into('#panel input[data-field="model.measured_power"]', -61)
    page.driver.find_element(By.ID, "add-tag").click()
    page.settle()
    page.type_into('#panel input[data-field="tag.0.name"]', "Alice")
    after = page.document()
    valid = page.state()["valid"]
    for _ in range(6):
        page.ctrl("z")
    page.settle()
    check(after["site"] == {"uuid": uuid, "name": "Head office"} and after["model"]["measured_power"] == -61
          and after.get("tags") == [{"id": f"ibeacon-{uuid}-1-1", "name": "Alice"}] and valid
          and page.document() == before,
          f"the site, the model and a known tag set from the panel, valid, and undone: {after['site']}, "
          f"{after.get('tags')}")


def more_tools(page):
    """The SVG plan's lines and shapes the map lacks, offered one by one (skip one, accept the next, undo it); a door
    and an obstacle."""
    before = page.document()
    page.key("c")
    offered = page.state()["candidates"]
    page.key("n", Keys.ENTER)
    after = page.document()
    added = sum(len(after.get(key, [])) - len(before.get(key, [])) for key in ("walls", "obstacles"))
    page.ctrl("z")
    page.settle()
    page.key("v")
    check(offered > 0 and added >= 1 and page.document() == before,
          f"the plan's shapes the map lacks are offered ({offered}); one skipped, one accepted ({added} added), undone")
    # A door on the first wall (which then blocks walking) and an obstacle: valid, then both undone.
    wall = before["walls"][0]
    at = [round((wall["from"][i] * 5 + wall["to"][i]) / 6, 2) for i in (0, 1)]
    page.key("d")
    page.click(*at)
    page.key("b")
    for point in ([20, 14], [22, 14], [22, 16]):
        page.click(*point)
    page.key(Keys.ENTER)
    page.settle()
    after = page.document()
    door = after["walls"][0].get("doors")
    valid = page.state()["valid"]
    page.ctrl("z")
    page.ctrl("z")
    page.settle()
    page.key("v")
    check(door == [{"at": at, "width": 0.9}] and after["walls"][0].get("blocks_walking") is True and valid
          and after.get("obstacles") == [{"floor": before["floors"][0]["major"], "polygon": [[20, 14], [22, 14], [22, 16]]}]
          and page.document() == before, f"a door ({door}) and an obstacle drawn, valid, and undone")


def marker_places(page):
    return page.js("""
        return Array.from(document.querySelectorAll('#plan .problem-marker')).map(m => {
          const box = m.querySelector('circle').getBoundingClientRect();
          return {path: m.dataset.path, x: Number(m.dataset.x), y: Number(m.dataset.y),
                  cx: box.left + box.width / 2, cy: box.top + box.height / 2};
        });""")


def expected_place(document, path):
    """Where a problem belongs: the agent, the zone's middle (its corners' mean), the wall's middle."""
    kind, index = path.split("[")[0][2:], int(path.split("[")[1].split("]")[0])
    element = document[kind][index]
    if kind == "agents":
        return element["x"], element["y"]
    if kind == "zones":
        points = element["polygon"]
        return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    if kind == "walls":
        return (element["from"][0] + element["to"][0]) / 2, (element["from"][1] + element["to"][1]) / 2
    return None


def invalid(binary, browser, work, path, page):
    """Check 2: an invalid map shows every problem at its place and cannot be saved."""
    with open(path, "rb") as handle:
        saved = handle.read()
    page.js("editor.setView(40, 60, 880)")
    agent = page.document()["agents"][0]
    page.key("v")
    page.drag_screen(page.screen(agent["x"], agent["y"]), page.screen(-1, agent["y"]))
    page.settle()
    page.key("z")
    for point in ([1, 1], [4, 1], [4, 3]):
        page.click(*point)
    page.key(Keys.ENTER)
    page.settle()
    wall = page.document()["walls"][0]
    page.key("v")
    page.click((wall["from"][0] * 3 + wall["to"][0]) / 4, (wall["from"][1] * 3 + wall["to"][1]) / 4)
    page.type_into('#panel input[data-field="loss"]', 99)
    text = page.js("return editor.text()")
    with open(os.path.join(work, "invalid.json"), "w") as handle:
        handle.write(text)
    status, output = map_check(binary, os.path.join(work, "invalid.json"))
    expected = sorted(line.split(":")[0].strip() for line in output.splitlines() if line.strip().startswith("$"))
    state = page.state()
    listed = page.js("return Array.from(document.querySelectorAll('#problems li')).map(li => li.dataset.path)")
    check(status == 2 and len(expected) >= 3 and sorted(p["path"] for p in state["problems"]) == expected
          and sorted(listed) == expected, f"all {len(expected)} problems `map check` finds are listed at once: {expected}")
    shot(browser, "editor-step-4-problems-in-place")
    document = page.document()
    markers = marker_places(page)
    misplaced = []
    for problem in expected:
        place = expected_place(document, problem)
        found = [m for m in markers if m["path"] == problem]
        if place is None or not found:
            misplaced.append(problem + " has no marker")
            continue
        on_screen = page.screen(*place)
        marker = found[0]
        if abs(marker["x"] - place[0]) > 1e-6 or abs(marker["y"] - place[1]) > 1e-6 or \
                abs(marker["cx"] - on_screen[0]) > 1.5 or abs(marker["cy"] - on_screen[1]) > 1.5:
            misplaced.append(f"{problem} marked at ({marker['x']}, {marker['y']}), not {place}")
    check(not misplaced and len(markers) == len(expected),
          f"every problem is marked at its place on the drawing ({len(markers)} markers) {misplaced}")
    disabled = page.js("return document.getElementById('save').disabled")
    page.ctrl("s")
    posted = page.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/edit/api/save', {method: 'POST', body: editor.text()}).then(r => r.json().then(b => done([r.status, b])));""")
    with open(path, "rb") as handle:
        untouched = handle.read() == saved
    check(disabled and posted[0] == 422 and len(posted[1]["problems"]) == len(expected) and untouched,
          f"the invalid map cannot be saved: button disabled {disabled}, a posted save answered {posted[0]} with "
          f"{len(posted[1]['problems'])} problems, the file untouched {untouched}")
    for _ in range(3):
        page.ctrl("z")
    page.settle()
    page.wait("return !document.getElementById('save').disabled", 5)
    page.driver.find_element(By.ID, "save").click()
    page.wait("return editor.state().saved !== ''", 10)
    with open(path, "rb") as handle:
        check(page.state()["valid"] and page.state()["saved"] == "unchanged" and handle.read() == saved,
              "undoing the three edits makes the map valid again, and saving it changes no byte")


# The planning view draws what the server's check answers as `plan` (AccuracyPlanJSON): the heat map's cells and
# each zone's expected accuracy in its label, recomputed as an agent is dragged.
def lobby_plan(page, editor):
    """The Lobby's label on the page, and its expected accuracy in the server's plan for the page's document."""
    label = page.js("return [...document.querySelectorAll('#plan text.zone-label')]"
                    ".map((t) => t.textContent).find((t) => t.startsWith('Lobby')) || ''")
    status, body = editor.request("POST", "/edit/api/check", json.dumps(page.document()).encode())
    plans = json.loads(body).get("plan", []) if status == 200 else []
    zones = next((plan["zones"] for plan in plans if plan["floor"] == 1), [])
    accuracy = next((zone["accuracy"] for zone in zones if zone["minor"] == 1), None)
    return label, accuracy


def planning_view(page, before, after):
    cells = page.js("return document.querySelectorAll('#planning-layer rect').length")
    shown = page.js("return !document.getElementById('plan-toggle').hidden")
    (label0, accuracy0), (label1, accuracy1) = before, after
    ok = (cells > 0 and shown and accuracy0 is not None and accuracy1 is not None
          and f"±{accuracy0:.1f} m" in label0 and f"±{accuracy1:.1f} m" in label1 and accuracy1 > accuracy0)
    return check(ok, f"the planning view draws the server's plan ({cells} runs of cells) and follows a dragged agent: "
                     f"{label0!r} -> {label1!r} with g-lobby dragged out of the Lobby")


def round_trip(binary, browser, work):
    """Check 3: the demo map saved untouched, and after an edit and its undo, keeps every byte."""
    path = os.path.join(work, "demo-office.json")
    with open(os.path.join(ROOT, "maps", "demo-office.json"), "rb") as handle:
        original = handle.read()
    with open(path, "wb") as handle:
        handle.write(original)
    editor = Editor(binary, path)
    try:
        page = Page(browser, editor.url)
        results = []
        for edit in (False, True):
            if edit:
                agent = page.document()["agents"][0]
                before = lobby_plan(page, editor)
                page.key("v")
                page.drag_screen(page.screen(agent["x"], agent["y"]), page.screen(agent["x"] + 17, agent["y"] + 13))
                page.settle()
                moved = page.document()["agents"][0] != agent
                shot(page.driver, "editor-step-5-planning-view")
                results.append(planning_view(page, before, lobby_plan(page, editor)))
                page.ctrl("z")
                page.settle()
                results.append(moved)
            page.wait("return !document.getElementById('save').disabled", 5)
            browser.find_element(By.ID, "save").click()
            page.wait("return editor.state().saved !== ''", 10)
            with open(path, "rb") as handle:
                results.append(handle.read() == original and page.state()["saved"] == "unchanged")
        check(all(results) and not os.path.exists(path + ".bak"),
              f"the demo map round-trips byte for byte, untouched and after an edit undone {results}")
    finally:
        editor.stop()


def token_refused(binary, browser, work):
    """Check 4: on an address other people can reach, writes need the token."""
    addresses = [a for a in subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
                 if "." in a and not a.startswith("127.")]
    if not check(bool(addresses), f"this machine has a non-loopback IPv4 address {addresses}"):
        return
    path = os.path.join(work, "shared.json")
    with open(os.path.join(ROOT, "maps", "demo-office.json"), "rb") as handle:
        original = handle.read()
    with open(path, "wb") as handle:
        handle.write(original)
    editor = Editor(binary, path, host=addresses[0])
    try:
        png = b"\x89PNG\r\n\x1a\n" + bytes(16)
        refused = [editor.request("POST", "/edit/api/save", original)[0],
                   editor.request("PUT", "/edit/api/underlay?floor=1&name=x.png", png)[0],
                   editor.request("POST", "/edit/api/save", original, token="0" * 32)[0]]
        with open(path, "rb") as handle:
            untouched = handle.read() == original and not os.path.exists(os.path.join(work, "x.png"))
        check(refused == [403, 403, 403] and untouched,
              f"on {addresses[0]}, writes without the token are refused {refused}, nothing written {untouched}")
        page = Page(browser, editor.base + "/edit")
        read_only = browser.execute_script("return document.getElementById('save').disabled && "
                                           "document.getElementById('save-result').textContent.includes('Read only')")
        check(read_only, "the page without the token says it is read-only and cannot save")
        taken = [editor.request("POST", "/edit/api/save", original, token=editor.token)[0],
                 editor.request("PUT", "/edit/api/underlay?floor=1&name=x.png", png, token=editor.token)[0]]
        check(taken == [200, 200], f"with the token they are taken {taken}")
    finally:
        editor.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--whereabouts", default=os.path.join(ROOT, ".build", "debug", "whereabouts"))
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--screenshots", metavar="DIR", help="save the steps as PNGs in DIR (for docs/)")
    args = parser.parse_args()
    global SHOTS
    SHOTS = args.screenshots
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
    with open(os.path.join(ROOT, "maps", "demo-office.json")) as handle:
        demo = json.load(handle)
    work = tempfile.mkdtemp(prefix="check-editor-")
    browser = start_browser()
    editor = None
    try:
        path, editor, page = draw(args.whereabouts, browser, work, demo)
        browser.save_screenshot(os.path.join(work, "drawn.png"))
        invalid(args.whereabouts, browser, work, path, page)
        editor.stop()
        editor = None
        round_trip(args.whereabouts, browser, work)
        token_refused(args.whereabouts, browser, work)
    finally:
        browser.quit()
        if editor is not None:
            editor.stop()
    if args.keep:
        print(f"working directory: {work}")
    if not args.keep:
        subprocess.run(["rm", "-rf", work], check=False)
    print(("editor check passed" if not failures else f"editor check FAILED: {len(failures)} checks"), flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
