#!/usr/bin/python3
"""The browser check behind scripts/check-web.sh: Debian's headless chromium, driven by python3-selenium, reads
the live page of `whereabouts web` while the locator runs with `whereabouts sim`, and compares the DOM with what the
broker holds (read independently with mosquitto_sub).

Checks, in order:
  1. latency: for position updates published while the simulation runs, the time from the message reaching a
     subscriber on the broker to the tag's dot changing in the DOM (a MutationObserver in the page); each <= 2 s;
  2. with some agents reported offline and the simulation paused (so nothing moves): every tag's dot is drawn where
     its retained position says, within 1 SVG pixel at 30 px per metre (3.3 cm), checked on the dot's rendered centre;
     no dot without a retained position;
  3. every zone's count equals its retained occupancy; a zone whose retained state is `unknown` shows as unknown
     (in the table and on the map), never as a number.
Then what the page says when a source of it is lost, and its lists (issue 49, items 6 and 7; scripts/web_freshness.py):
  - framing: another origin cannot frame the page by default, and can once web runs with --frame-ancestors;
  - the tag list (with last seen), the agent list, and the zone probabilities of the retained positions and occupancy;
  - web stopped: the page says it lost web and greys every dot with its age; restarted (with --state-dir), it shows
    the events and the zones' crossings it had;
  - agents silent: every dot in an unknown zone is grey with its age, the others keep the live colour;
  - the broker stopped (SIGTERM: it sends its clients' last wills as it goes): "broker lost", the locator "last said
    online", the agents still online (greyed), every dot and the figures grey; the broker restarted: live again;
  - the locator killed: its will makes the page say the locator is offline, dots, counts and figures grey, ages
    counting.
Exit status 0 when all pass, 1 otherwise. Prints one line per check and a summary.
"""
import argparse, json, os, signal, statistics, subprocess, sys, threading, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

import web_freshness

SCALE = 30.0      # pixels per metre: MapRenderer's default, which the page uses
MARGIN = 40.0     # MapRenderer's margin; a floor alone is drawn from (MARGIN, MARGIN + 24)
TOLERANCE = 1.0   # SVG pixels


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--map", required=True)
    parser.add_argument("--sim-pid", type=int, required=True)
    parser.add_argument("--web-pid", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--offline-floor", type=int, default=2)
    parser.add_argument("--latency-seconds", type=float, default=12)
    parser.add_argument("--web-restart-command", required=True, help="the web command to restart with, as JSON")
    parser.add_argument("--broker-pid", type=int, required=True)
    parser.add_argument("--broker-conf", required=True)
    parser.add_argument("--locator-pid", type=int, required=True)
    parser.add_argument("--frame-port", type=int, required=True)
    return parser.parse_args()


class Broker:
    """What mosquitto_sub sees: the latest payload per topic, and every position with its arrival time."""

    def __init__(self, port, prefix):
        self.lock = threading.Lock()
        self.latest = {}
        self.positions = []
        self.prefix = prefix
        self.process = subprocess.Popen(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-F", "%U %t %p",
             "-t", prefix + "/tags/+/position", "-t", prefix + "/floors/+/zones/+/occupancy"],
            stdout=subprocess.PIPE, text=True, bufsize=1)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) < 2:
                continue
            arrival, topic = float(parts[0]), parts[1]
            payload = parts[2] if len(parts) == 3 else ""
            with self.lock:
                self.latest[topic] = payload
                if topic.endswith("/position"):
                    self.positions.append((arrival, topic.split("/")[-2], payload))

    def retained(self, kind):
        with self.lock:
            items = [(topic, payload) for topic, payload in self.latest.items() if topic.endswith(kind)]
        return [(topic, json.loads(payload)) for topic, payload in items if payload]

    def last_position_change(self):
        with self.lock:
            return self.positions[-1][0] if self.positions else 0.0

    def stop(self):
        self.process.terminate()


def wait_for(driver, script, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if driver.execute_script(script):
            return True
        time.sleep(0.1)
    return False


def frames(map_document):
    result = {}
    for floor in map_document["floors"]:
        xs = [point[0] for point in floor["outline"]]
        ys = [point[1] for point in floor["outline"]]
        result[floor["major"]] = (MARGIN - min(xs) * SCALE, MARGIN + 24 + max(ys) * SCALE)
    return result


def expected_pixel(frame, x, y):
    return frame[0] + x * SCALE, frame[1] - y * SCALE


INSTALL_OBSERVER = """
window.__moves = [];
new MutationObserver(function (records) {
  const now = Date.now() / 1000;
  for (const record of records) {
    const group = record.target;
    if (record.attributeName === 'data-py' && group.classList && group.classList.contains('tag-dot')) {
      window.__moves.push({tag: group.dataset.tag, px: Number(group.dataset.px), py: Number(group.dataset.py), t: now});
    }
  }
}).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-py']});
"""

READ_DOTS = """
const result = [];
for (const group of document.querySelectorAll('g.tag-dot')) {
  const svg = group.ownerSVGElement;
  const box = group.querySelector('circle.dot').getBoundingClientRect();
  const point = svg.createSVGPoint();
  point.x = box.left + box.width / 2; point.y = box.top + box.height / 2;
  const local = point.matrixTransform(svg.getScreenCTM().inverse());
  result.push({tag: group.dataset.tag, floor: Number(group.dataset.floor), px: Number(group.dataset.px),
    py: Number(group.dataset.py), cx: local.x, cy: local.y, screenScale: svg.getScreenCTM().a * 30});
}
return result;
"""

READ_ZONES = """
const result = {};
for (const row of document.querySelectorAll('#zones tr[data-zone]')) {
  const label = document.querySelector('svg text.zone-label[data-zone="' + row.dataset.zone + '"]');
  result[row.dataset.zone] = {state: row.dataset.state, count: row.querySelector('.zone-count').textContent,
    label: label ? label.textContent : null};
}
return result;
"""


def main():
    args = parse_args()
    with open(args.map) as handle:
        map_document = json.load(handle)
    site = map_document["site"]["uuid"].lower()
    prefix = "whereabouts/v1/" + site
    floor_frames = frames(map_document)
    broker = Broker(args.broker_port, prefix)
    failures = []
    restarted = None
    broker_restarted = None

    def check(ok, text):
        print(("ok    " if ok else "FAIL  ") + text, flush=True)
        if not ok:
            failures.append(text)

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1600,1400", "--hide-scrollbars"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        parent = web_freshness.FramingParent(args.frame_port, args.url)
        web_freshness.framing(check, parent, driver, args.url, allowed=False)
        driver.get(args.url)
        deadline = time.time() + 30
        while time.time() < deadline:
            state = driver.execute_script(
                "return [document.body.dataset.stream, Number(document.body.dataset.seq || 0),"
                " document.querySelectorAll('g.tag-dot').length]")
            if state[0] == "live" and state[1] > 0 and state[2] > 0:
                break
            time.sleep(0.2)
        check(state[0] == "live" and state[2] > 0, f"page live with {state[2]} tag dots after the snapshot")

        # 1. Latency from a position reaching the broker's subscribers to the dot moving in the DOM.
        driver.execute_script(INSTALL_OBSERVER)
        start = time.time()
        time.sleep(args.latency_seconds)
        moves = driver.execute_script("return window.__moves")
        with broker.lock:
            published = [entry for entry in broker.positions if entry[0] >= start + 0.5]
        previous = {}
        latencies = []
        unmatched = 0
        for arrival, tag, payload in published:
            if not payload:
                continue
            position = json.loads(payload)
            frame = floor_frames.get(position["floor"])
            if frame is None:
                continue
            px, py = expected_pixel(frame, position["x"], position["y"])
            key = (round(px, 2), round(py, 2), position["floor"])
            if previous.get(tag) == key:
                continue  # the same place again moves nothing
            previous[tag] = key
            match = [move["t"] for move in moves if move["tag"] == tag and abs(move["px"] - px) < 0.02
                     and abs(move["py"] - py) < 0.02 and move["t"] >= arrival - 0.5]
            if match:
                latencies.append(max(match[0] - arrival, 0.0))
            elif arrival < start + args.latency_seconds - 2.5:
                unmatched += 1
        if latencies:
            ordered = sorted(latencies)
            p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
            print(f"      latency publish -> DOM over {len(latencies)} updates: median "
                  f"{statistics.median(latencies) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
                  f"max {max(latencies) * 1000:.0f} ms", flush=True)
        check(len(latencies) >= 10, f"{len(latencies)} position updates seen moving a dot")
        check(unmatched == 0, f"{unmatched} position updates never moved their dot")
        check(bool(latencies) and max(latencies) <= 2.0, "every dot moved within 2 s of its position update")
        web_freshness.lists_and_probabilities(driver, check, broker, map_document)

        # The page's controls: the floor picker hides the other floors, the search highlights one tag, and each
        # zone links to its last hour.
        from selenium.webdriver.common.by import By
        driver.find_element(By.CSS_SELECTOR, '#floor-picker button[data-floor="2"]').click()
        hidden = driver.execute_script(
            "return Array.from(document.querySelectorAll('.floor-view')).map(v => [v.dataset.floor, v.hidden])")
        check(all(is_hidden == (floor != "2") for floor, is_hidden in hidden), f"floor picker shows floor 2 only {hidden}")
        driver.find_element(By.CSS_SELECTOR, '#floor-picker button[data-floor="all"]').click()
        label = driver.execute_script("return document.querySelector('g.tag-dot text.tag-name').textContent")
        driver.find_element(By.ID, "tag-search").send_keys(label)
        time.sleep(0.3)
        lit = driver.execute_script(
            "return Array.from(document.querySelectorAll('g.tag-dot.highlight')).map(g => g.textContent)")
        result = driver.find_element(By.ID, "search-result").text
        check(label in lit and all(label.lower() in text.lower() for text in lit) and result != "",
              f"search for {label!r} highlights {lit} ({result!r})")
        driver.find_element(By.ID, "tag-search").clear()
        driver.execute_script("document.getElementById('tag-search').dispatchEvent(new Event('input'))")
        link = driver.find_element(By.CSS_SELECTOR, '#zones tr[data-zone="1-1"] a').get_attribute("href")
        page = driver.execute_script(
            "const r = new XMLHttpRequest(); r.open('GET', arguments[0], false); r.send(); return r.responseText", link)
        check("the last hour" in page and "chart" in page, f"zone history page at {link}")

        # The stream reconnects by itself: stop the server, see the page notice, start it again on the same port,
        # and see a fresh snapshot arrive without reloading the page.
        zone_keys = [f"{zone['floor']}-{zone['minor']}" for zone in map_document["zones"]]
        history = web_freshness.remember_history(driver, args.url, zone_keys)
        os.kill(args.web_pid, signal.SIGTERM)
        noticed = wait_for(driver, "return document.body.dataset.stream === 'reconnecting'", 10)
        web_freshness.page_lost(driver, check)
        restart_log = open(os.path.join(args.out, "web-restarted.log"), "w")
        for _ in range(50):  # until the old process has let go of the port
            restarted = subprocess.Popen(json.loads(args.web_restart_command), stdout=subprocess.DEVNULL,
                                         stderr=restart_log)
            time.sleep(0.3)
            if restarted.poll() is None:
                break
        driver.execute_script("document.body.dataset.seq = '0'")
        back = wait_for(driver, "return document.body.dataset.stream === 'live' && "
                        "Number(document.body.dataset.seq) > 0 && document.querySelectorAll('g.tag-dot').length > 0", 20)
        check(noticed and back, "the page noticed the server stop and reconnected to a fresh snapshot on its own")
        web_freshness.history_kept(driver, check, args.url, history)

        # 2. Report one floor's agents offline (as their last wills would), then pause the simulation so that
        #    nothing moves while the DOM is compared with the retained state.
        before = driver.execute_script(READ_ZONES)
        known_before = [key for key, zone in before.items()
                        if key.startswith(f"{args.offline_floor}-") and zone["state"] == "known"]
        check(len(known_before) > 0, f"before its agents are reported offline, floor {args.offline_floor} has "
              f"{len(known_before)} known zones")
        for agent in map_document["agents"]:
            if agent["floor"] == args.offline_floor:
                subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(args.broker_port), "-r", "-q", "1",
                                "-t", f"{prefix}/agents/{agent['id']}/status", "-m", "offline"], check=True)
        time.sleep(2)
        os.kill(args.sim_pid, signal.SIGSTOP)
        try:
            quiet_deadline = time.time() + 15
            while time.time() < quiet_deadline and time.time() - broker.last_position_change() < 1.5:
                time.sleep(0.1)
            time.sleep(1.5)  # the dots' 0.9 s transition ends
            positions = broker.retained("/position")
            dots = {dot["tag"]: dot for dot in driver.execute_script(READ_DOTS)}
            worst = 0.0
            misplaced = []
            for topic, position in positions:
                tag = topic.split("/")[-2]
                dot = dots.get(tag)
                frame = floor_frames.get(position["floor"])
                if dot is None or frame is None or dot["floor"] != position["floor"]:
                    misplaced.append(tag)
                    continue
                px, py = expected_pixel(frame, position["x"], position["y"])
                error = max(abs(dot["cx"] - px), abs(dot["cy"] - py), abs(dot["px"] - px), abs(dot["py"] - py))
                worst = max(worst, error)
                if error > TOLERANCE:
                    misplaced.append(f"{tag} off by {error:.2f} px")
            ghosts = sorted(set(dots) - {topic.split("/")[-2] for topic, _ in positions})
            scale = next(iter(dots.values()))["screenScale"] if dots else 0
            check(len(positions) > 0 and not misplaced,
                  f"{len(positions)} dots where their retained positions say (worst {worst:.2f} px of {TOLERANCE} "
                  f"allowed, at {SCALE:.0f} px/m in SVG units; {scale:.1f} screen px/m) {misplaced[:3]}")
            check(not ghosts, f"no dot without a retained position {ghosts[:3]}")

            # 3. Zone counts and unknown zones.
            zones = driver.execute_script(READ_ZONES)
            wrong = []
            unknown = []
            for topic, occupancy in broker.retained("/occupancy"):
                key = f"{occupancy['floor']}-{occupancy['zone']}"
                shown = zones.get(key)
                if shown is None:
                    wrong.append(key + " missing")
                elif occupancy["state"] == "unknown":
                    unknown.append(key)
                    if shown["state"] != "unknown" or shown["count"] != "unknown" or "(unknown)" not in shown["label"]:
                        wrong.append(f"{key} unknown shown as {shown}")
                elif shown["state"] != "known" or shown["count"] != str(occupancy["count"]) \
                        or f"({occupancy['count']})" not in shown["label"]:
                    wrong.append(f"{key} count {occupancy['count']} shown as {shown}")
            check(len(broker.retained("/occupancy")) == len(map_document["zones"]) and not wrong,
                  f"{len(zones)} zone counts equal the retained occupancy {wrong[:3]}")
            check(len(unknown) > 0, f"{len(unknown)} zones retained as unknown show as unknown ({', '.join(unknown)})")
            # 4. Every message the page received matched the schema the server's Swift types wrote (the script
            #    drops one that does not and marks the body), and the locator's figures reached the header.
            mismatch = driver.execute_script("return document.body.dataset.schemaError || ''")
            check(mismatch == "", f"every message the page received matched the schema {mismatch!r}")
            metrics = driver.find_element(By.ID, "metrics").text
            check("readings/s" in metrics and "online" in metrics, f"the locator's figures shown: {metrics!r}")
            # The artefact: chromium's own screenshot of the paused, checked state.
            shot = os.path.join(args.out, "web.png")
            subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--hide-scrollbars", "--window-size=1600,1800", "--timeout=3000",
                            f"--screenshot={os.path.abspath(shot)}", args.url],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
            check(os.path.exists(shot) and os.path.getsize(shot) > 10000, f"screenshot saved: {shot}")

            # Sources lost, one after the other: the agents (already silent), the broker, the locator.
            web_freshness.silent_zones(driver, check)
            broker_restarted = web_freshness.broker_lost(driver, check, args.broker_pid, args.broker_conf, args.out)
            web_freshness.locator_gone(driver, check, args.locator_pid, args.out)
            web_freshness.framing(check, parent, driver, args.url, allowed=True)
        finally:
            os.kill(args.sim_pid, signal.SIGCONT)
    finally:
        driver.quit()
        broker.stop()
        for process in [restarted, broker_restarted]:
            if process is not None:
                process.terminate()
                process.wait(10)
    print(("browser check passed" if not failures else f"browser check FAILED: {len(failures)} checks"), flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
