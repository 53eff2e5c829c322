#!/usr/bin/python3
"""The editor's survey mode in a real browser (issue 46, items 4 and 5): Debian's headless chromium driven by
python3-selenium against `whereabouts web --edit` with a broker, whose survey tag is the simulator's.

Starts a private mosquitto on a free loopback port with the shipped ACL (deploy/mosquitto/whereabouts.acl) and
accounts for the simulated agents and for `surveyor`; `whereabouts sim` on the survey room (each agent's true
constants off the map's, `--place-sigma 4`) with a steered survey tag (`--survey-tag`, `--waypoints` a FIFO this
script writes to) at 20 times real time; and `whereabouts web --edit` on a copy of the room's map with that broker,
`--time-scale 20` and the default dwell of 30 s (1.5 s of real time a point). In the page:

  1. survey mode (key U): the survey tag is picked from the tags heard; for each of 24 points every 2 m, the point
     goes to the sim's FIFO, the tag walks there, and the page is clicked where it stands; the ring at the point
     fills over the dwell; the areas drawn on the map and the table carry the server's per-area counts, and the
     lacking areas are the server's;
  2. finish: the report drawn on the map (per area: samples, error before -> after, survey next) equals the server's
     report.json; `whereabouts calibrate` on the recorded files prints the same per-area figures and writes the same
     calibrated map; a later simulated walk replayed with it is measured by `whereabouts evaluate` within the factor
     stated below of the report's held-out figure;
  3. save: the calibrated map is written over the map file (the previous one kept as .bak), passes `map check`, and
     the page reloads it; the standalone report is served as HTML with its drawing and no script.

Prints one line per check; exit status 0 when all pass, 1 otherwise. `--screenshots DIR` saves the report on the map
as DIR/editor-survey.png (docs/editor.md) and the survey under way as DIR/editor-survey-progress.png.

  bash scripts/bootstrap-browser.sh && swift build --product whereabouts && /usr/bin/python3 scripts/check-editor-survey.py
"""
import argparse, importlib.util, json, os, subprocess, sys, tempfile, time, urllib.request

from selenium.webdriver.common.by import By

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("check_editor", os.path.join(ROOT, "scripts", "check-editor.py"))
editor_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(editor_check)
check, Page, start_browser, failures = editor_check.check, editor_check.Page, editor_check.start_browser, editor_check.failures

TAG = "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7"
SPEED = 20  # simulated seconds per real second, for the simulator and the survey's clock alike
CHANNEL = ["--sigma", "2", "--place-sigma", "4"]  # shadowing mostly of the place: what a radio map can learn
ROOM = os.path.join(ROOT, "Tests", "EndToEndTests", "Fixtures", "survey-room.json")
# Every 2 m, row by row (as SurveyEndToEndTests): about three quarters of the room within 1 m of a point.
POINTS = [(x, y) for row, y in enumerate([1, 3, 5, 7]) for x in ([1, 3, 5, 7, 9, 11] if row % 2 == 0 else [11, 9, 7, 5, 3, 1])]


class Processes:
    """The programs this check starts, stopped last first (the broker last, so that its clients can say goodbye)."""

    def __init__(self, work):
        self.work, self.started = work, []

    def start(self, name, arguments, **options):
        log = open(os.path.join(self.work, name + ".log"), "w")
        process = subprocess.Popen(arguments, stderr=log, stdout=options.pop("stdout", log), **options)
        self.started.append((process, log))
        return process

    def stop(self):
        for process, log in reversed(self.started):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()  # `sim --broker` does not always take SIGTERM (SurveyEndToEndTests says why)
                    process.wait(5)
            log.close()


def run(arguments):
    result = subprocess.run(arguments, capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def start_broker(binary, work, processes):
    """mosquitto on a free loopback port with the shipped ACL; accounts s-1…s-5 (the agents) and surveyor."""
    port = int(run([binary, "free-port"])[1].strip())
    passwords = os.path.join(work, "passwords")
    with open(ROOM) as handle:
        agents = [agent["id"] for agent in json.load(handle)["agents"]]
    for index, (user, secret) in enumerate([(a, "agent-secret") for a in agents] + [("surveyor", "survey-secret")]):
        subprocess.run(["mosquitto_passwd", "-b"] + (["-c"] if index == 0 else []) + [passwords, user, secret], check=True)
    for name, secret in [("agent", "agent-secret"), ("surveyor", "survey-secret")]:
        with open(os.path.join(work, name + ".password"), "w") as handle:
            handle.write(secret + "\n")
    lines = [f"listener {port} 127.0.0.1", "allow_anonymous false", "persistence false",
             f"password_file {passwords}", f"acl_file {os.path.join(ROOT, 'deploy', 'mosquitto', 'whereabouts.acl')}",
             f"log_dest file {os.path.join(work, 'mosquitto.log')}"]
    if os.getuid() == 0:
        lines.append("user root")  # else it drops to its own user, which cannot read the files here
    with open(os.path.join(work, "mosquitto.conf"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    processes.start("mosquitto-out", ["mosquitto", "-c", os.path.join(work, "mosquitto.conf")])
    import socket
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return port
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("mosquitto did not start; see " + work)


def world(into):
    """The survey room with each agent's true constants off the map's defaults (what the survey is for)."""
    with open(ROOM) as handle:
        document = json.load(handle)
    truths = [(4.5, 2.8), (-3.2, 2.2), (1.0, 3.3), (-5.5, 1.9), (2.7, 2.6)]
    for index, agent in enumerate(document["agents"]):
        agent["rssi_offset"], agent["path_loss_exponent"] = truths[index % len(truths)]
    with open(into, "w") as handle:
        json.dump(document, handle)


def last_position(path):
    """Where the survey tag last was, by the simulator's truth file."""
    try:
        with open(path) as handle:
            lines = [line for line in handle if TAG in line]
        record = json.loads(lines[-1]) if lines else None
        return (record["x"], record["y"]) if record else None
    except (OSError, ValueError):
        return None


def wait_until(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=10) as response:
        return json.loads(response.read())


def pick_tag(page, base):
    """Survey mode, the survey tag picked from the list of tags heard, then taken."""
    page.key("u")
    page.wait("return editor.survey().status && editor.survey().status.connected === true", 20)
    found = page.wait("return document.querySelector('#survey-heard [data-heard=\"' + arguments[0] + '\"]') !== null", 20, TAG)
    check(found, "survey mode lists the survey tag among the tags the agents hear")
    page.driver.find_element(By.CSS_SELECTOR, f'#survey-heard [data-heard="{TAG}"]').click()
    page.driver.find_element(By.ID, "survey-start").click()
    started = page.wait("return editor.survey().status.progress && editor.survey().status.progress.tag === arguments[0]", 10, TAG)
    status = get_json(base, "/edit/api/survey/status")
    check(started and status["progress"]["tag"] == TAG and status["directory"],
          f"picking it starts the survey with it, recording into {status['directory']}")


def survey_points(page, base, fifo, sim_truth, screenshots):
    """Each point: the tag walks there, the page is clicked there, the ring fills over the dwell."""
    fills, rings = [], 0
    for index, (x, y) in enumerate(POINTS):
        os.write(fifo, f"{x} {y} 1\n".encode())
        wait_until(lambda: (last_position(sim_truth) or (None, None)) == (x, y), 30, f"the tag to reach ({x}, {y})")
        page.click(x, y)
        seen = set()
        deadline = time.time() + 30
        while time.time() < deadline:
            ring = page.js("const g = document.getElementById('survey-ring'); return g && "
                           "[g.getAttribute('class'), Number(g.dataset.progress), Number(g.dataset.x), Number(g.dataset.y)]")
            places = (get_json(base, "/edit/api/survey/status")["progress"] or {}).get("places")
            if ring and (ring[2], ring[3]) == (x, y) and places == index + 1:
                seen.add(ring[1])
                if ring[0] == "done" and ring[1] == 1:
                    break
            if screenshots and index == 4 and ring and 0.3 < ring[1] < 0.8 and not os.path.exists(screenshots + "/p"):
                page.driver.save_screenshot(os.path.join(screenshots, "editor-survey-progress.png"))
                open(screenshots + "/p", "w").close()
            time.sleep(0.03)
        rings += 1 if 1 in seen else 0
        fills.append(len([p for p in seen if 0 < p < 1]))
        if index == 5:
            status = areas_match(page, base, "after 6 points")
            check(len(status["progress"]["lacking"]) > 0, f"after 6 points, areas still lack samples: "
                                                          f"{status['progress']['lacking']} (hatched on the map)")
    if screenshots and os.path.exists(screenshots + "/p"):
        os.remove(screenshots + "/p")
    check(rings == len(POINTS) and sum(1 for f in fills if f > 0) >= len(POINTS) // 2,
          f"a ring at each clicked point fills over the dwell and closes full ({rings} of {len(POINTS)} full; "
          f"part-filled rings seen at {sum(1 for f in fills if f > 0)} points)")


def areas_match(page, base, when):
    """The areas drawn and listed are the server's, with its counts; the lacking ones are its lacking ones."""
    time.sleep(1.2)  # one more poll of the page after the last point
    status = get_json(base, "/edit/api/survey/status")
    drawn = page.js("return [...document.querySelectorAll('#plan .survey-area')].map((p) => "
                    "[p.dataset.area, Number(p.dataset.samples), Number(p.dataset.needed), p.classList.contains('lacking')])")
    listed = page.js("return [...document.querySelectorAll('#survey-areas tr[data-area]')].map((r) => "
                     "[r.dataset.area, Number(r.cells[2].textContent), r.classList.contains('lacking')])")
    server = [[a["name"], a["samples"], a["needed"], not a["checked"]] for a in status["progress"]["areas"]]
    lacking_text = page.js("return (document.getElementById('survey-lacking') || {}).textContent || ''")
    ok = (sorted(drawn) == sorted(server) and [[a, s, l] for a, s, _, l in server] == listed and len(server) >= 4
          and all(name in lacking_text for name in status["progress"]["lacking"]))
    check(ok, f"{when}, the areas on the map and in the table carry the server's counts: "
              f"{', '.join(f'{a} {s}' + (' (lacking)' if l else '') for a, s, _, l in server)}")
    return status


def report_matches(page, base):
    """The report drawn on the map is the server's report.json."""
    page.driver.find_element(By.ID, "survey-finish").click()
    ready = page.wait("return document.body.dataset.surveyReport !== undefined", 120)
    report = get_json(base, "/edit/api/survey/report.json")
    drawn = page.js("return [...document.querySelectorAll('#plan .report-area')].map((p) => ({name: p.dataset.area, "
                    "samples: Number(p.dataset.samples), checked: p.dataset.checked === 'true', before: p.dataset.before, "
                    "after: p.dataset.after, next: p.dataset.next === 'true'}))")
    labels = page.js("return Object.fromEntries([...document.querySelectorAll('#plan text[data-report-label]')].reduce("
                     "(m, t) => m.set(t.dataset.reportLabel, (m.get(t.dataset.reportLabel) || '') + t.textContent + '|'), new Map()))")
    expected, ok = [], ready and report["ok"] and len(drawn) == len(report["areas"])
    for area in report["areas"]:
        mine = next((d for d in drawn if d["name"] == area["name"]), None)
        figures = (f"{area['before']['median']:.2f} → {area['after']['median']:.2f} m" if area["checked"]
                   else "too few samples")
        label = labels.get(area["name"], "")
        shown = (mine is not None and mine["samples"] == area["samples"] and mine["checked"] == area["checked"]
                 and mine["next"] == (area["name"] in report["survey_next"])
                 and figures in label and f"{area['samples']} samples" in label)
        if shown and area["checked"]:
            shown = (float(mine["before"]) == area["before"]["median"]
                     and float(mine["after"]) == area["after"]["median"])
        ok = ok and shown
        expected.append(f"{area['name']} {area['samples']} {figures}")
    check(ok, f"the report drawn on the map is the server's report.json: {'; '.join(expected)}; "
              f"survey next {report['survey_next']}")
    return report


def against_calibrate(binary, work, directory, report):
    """`whereabouts calibrate` on the recorded files prints the report's per-area figures and writes its map."""
    out = os.path.join(work, "calibrated.json")
    status, printed, errors = run([binary, "calibrate", "--map", os.path.join(work, "room-original.json"), "--readings",
                                   os.path.join(directory, "survey-readings.jsonl"), "--truth",
                                   os.path.join(directory, "survey-truth.jsonl"), "--out", out])
    lines = printed.splitlines()
    pair = lambda s: f"{s['median']:.2f} / {s['p90']:.2f}"
    ok = status == 0
    for area in report["areas"]:
        line = next((l for l in lines if l.startswith(area["name"] + " ")), "")
        words = line.split()
        ok = ok and len(words) > 1 and int(words[1]) == area["samples"]
        ok = ok and ((pair(area["before"]) in line and pair(area["after"]) in line) if area["checked"]
                     else "too few samples" in line)
    expected_line = next((l for l in lines if l.startswith("expected over the floor")), "")
    ok = ok and pair(report["expected"]["after"]) in expected_line
    with open(out) if status == 0 else open(os.devnull) as handle:
        same_map = status == 0 and json.load(handle) == json.loads(report["map"])
    check(ok and same_map, f"whereabouts calibrate on the recorded files prints the same per-area figures and writes "
                           f"the same map (exit {status}; {expected_line.strip()})")
    if not ok:
        print(printed + errors)


def later_walk(binary, work, saved, original, report):
    """A later walk of four simulated people, replayed with the saved map and with the map as it was."""
    readings, truth = os.path.join(work, "walk.jsonl"), os.path.join(work, "walk-truth.jsonl")
    run([binary, "sim", "--map", os.path.join(work, "world.json"), "--tags", "4", "--duration", "900", "--seed", "2",
         "--readings", readings, "--truth", truth] + CHANNEL)
    measured, within = {}, {}
    for name, path in [("saved", saved), ("map", original)]:
        positions = os.path.join(work, f"positions-{name}.jsonl")
        run([binary, "replay", "--map", path, "--readings", readings, "--positions", positions])
        status, printed, _ = run([binary, "evaluate", "--positions", positions, "--truth", truth, "--json"])
        line = next((l for l in reversed(printed.splitlines()) if l.startswith("{")), "{}")
        measured[name] = json.loads(line).get("error_m", {}).get("median")
        within[name] = json.loads(line).get("within_accuracy")
    held_out, expected = report["overall"]["after"]["median"], report["expected"]["after"]["median"]
    calibrated, before = measured["saved"], measured["map"]
    if not check(calibrated is not None and before is not None, f"evaluate measures the later walk {measured}"):
        return
    print(f"      evaluate on a later walk: saved map {calibrated:.3f} m, the map as it was {before:.3f} m; the report: "
          f"held out {held_out:.3f} m, expected {expected:.3f} m; held out before {report['overall']['before']['median']:.3f} m; "
          f"after / before: walk {calibrated / before:.3f}, held out {held_out / report['overall']['before']['median']:.3f}; "
          f"held out / walk {held_out / calibrated:.3f}; within own accuracy: saved map {within['saved']}, "
          f"the map as it was {within['map']}; the saved map's accuracy scale "
          f"{json.load(open(saved)).get('model', {}).get('accuracy_scale')}", flush=True)
    # The factors. The held-out figure (by area, where the survey did not go) is measured on a tag that stood still
    # 30 s at each point, the later walk on four people walking about, who get more. How much more depends on how
    # cleanly the tag stood while sampled, and so on the machine's load: 23 runs of this check read the held-out
    # median at 0.56-0.95 of the walk's, 0.56-0.57 on an idle machine (CI's run at de6d29d among them), 0.66-0.95
    # with builds beside it (SurveyEndToEndTests, through `whereabouts survey`, asks for within a third; its runs read
    # closer). So: within a factor 2 below and 25 % above. The gain is steadier: before -> after, held out and on the
    # walk, agreed within 7 % in five loaded runs (printed above, not asserted: no idle run of it yet). The expected
    # figure also counts the surveyed share at the survey's own error, on the readings the radio map was learnt from:
    # within a factor 2.5 below and 25 % above, as SurveyEndToEndTests has it (0.46-0.76 of the walk's here).
    ok = (calibrated < 0.75 * before and calibrated / 2 <= held_out <= 1.25 * calibrated
          and calibrated / 2.5 <= expected <= 1.25 * calibrated)
    check(ok, f"the saved map's report agrees with evaluate on a later walk: held out {held_out:.2f} m against "
              f"{calibrated:.2f} m (within 1/2…1.25), expected {expected:.2f} m (within 1/2.5…1.25); "
              f"the map as it was {before:.2f} m")


def save(page, binary, base, work, path, original_bytes):
    page.driver.find_element(By.ID, "survey-save").click()
    saved = page.wait("return document.body.dataset.surveySaved === '1' && document.body.dataset.state === 'ready'", 20)
    status, printed, errors = run([binary, "map", "check", path])
    with open(path + ".bak", "rb") as handle:
        backup = handle.read() == original_bytes
    with open(path) as handle:
        text = handle.read()
    report = get_json(base, "/edit/api/survey/report.json")
    reloaded = page.js("return editor.document()") == json.loads(text)
    hint = page.js("return document.getElementById('survey-save-result').textContent")
    check(saved and status == 0 and backup and json.loads(text) == json.loads(report["map"]) and reloaded
          and "systemctl reload" in hint,
          f"saving writes the calibrated map (map check: {(printed + errors).strip().splitlines()[-1:]}), keeps the old "
          f"file as .bak, says how to make the locator take it, and the page reloads it")
    with urllib.request.urlopen(base + "/edit/api/survey/report.html", timeout=10) as response:
        html = response.read().decode()
        policy = response.headers.get("Content-Security-Policy", "")
    check("<svg" in html and "<script" not in html and "sandbox" in policy,
          "the standalone report is served as HTML with its drawing, no script, under a sandboxing policy")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--whereabouts", default=os.path.join(ROOT, ".build", "debug", "whereabouts"))
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--screenshots", help="save editor-survey.png (and the survey under way) here")
    args = parser.parse_args()
    binary, started = args.whereabouts, time.time()
    work = tempfile.mkdtemp(prefix="check-editor-survey-")
    processes = Processes(work)
    browser = None
    try:
        port = start_broker(binary, work, processes)
        broker = ["--broker", f"mqtt://127.0.0.1:{port}"]
        world(os.path.join(work, "world.json"))
        path = os.path.join(work, "room.json")
        with open(ROOM, "rb") as handle:
            original_bytes = handle.read()
        for name in ("room.json", "room-original.json"):
            with open(os.path.join(work, name), "wb") as handle:
                handle.write(original_bytes)
        fifo_path = os.path.join(work, "waypoints")
        os.mkfifo(fifo_path)
        fifo = os.open(fifo_path, os.O_RDWR)  # read-write: neither end waits for the other to open
        origin = str(int(time.time()))
        sim_truth = os.path.join(work, "sim-truth.jsonl")
        processes.start("sim", [binary, "sim", "--map", os.path.join(work, "world.json"), "--tags", "0", "--duration",
                                "7200", "--seed", "1", "--password-file", os.path.join(work, "agent.password"),
                                "--speed", str(SPEED), "--time-origin", origin, "--survey-tag", TAG, "--waypoints",
                                fifo_path, "--truth", sim_truth] + CHANNEL + broker)
        directory = os.path.join(work, "survey")
        web = processes.start("web", [binary, "web", "--edit", path, "--listen", "127.0.0.1:0", "--password-file",
                                      os.path.join(work, "surveyor.password"), "--time-scale", str(SPEED),
                                      "--time-origin", origin, "--survey-dir", directory] + broker,
                              stdout=subprocess.PIPE, text=True)
        url = web.stdout.readline().split()[-1]
        base = url.split("/edit?")[0]
        browser = start_browser()
        page = Page(browser, url)
        pick_tag(page, base)
        survey_points(page, base, fifo, sim_truth, args.screenshots)
        areas_match(page, base, "at the end")
        report = report_matches(page, base)
        if args.screenshots:
            page.js("document.getElementById('survey-report').scrollIntoView()")
            browser.save_screenshot(os.path.join(args.screenshots, "editor-survey.png"))
        against_calibrate(binary, work, directory, report)
        save(page, binary, base, work, path, original_bytes)
        later_walk(binary, work, path, os.path.join(work, "room-original.json"), report)
    finally:
        if browser is not None:
            browser.quit()
        processes.stop()
    print(f"      the check took {time.time() - started:.0f} s", flush=True)
    if args.keep:
        print(f"working directory: {work}")
    else:
        subprocess.run(["rm", "-rf", work], check=False)
    print(("survey check passed" if not failures else f"survey check FAILED: {len(failures)} checks"), flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
