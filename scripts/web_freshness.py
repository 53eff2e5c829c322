"""Checks of scripts/check-web.py for issue 49, items 6 and 7: what the live page shows when a source of it is lost
(its own stream from `whereabouts web`, web's broker, the locator, a zone's agents), the tag and agent lists, the
zone probabilities, framing by configured origins, and the events and zone hours kept across a restart of web.

Each function takes the selenium driver and a `check(ok, text)` that records the result; none stops at a failure.
"""
import http.server, json, os, re, signal, subprocess, threading, time, urllib.request

AGE = re.compile(r"^\d+ (s|min|h)$")
LIVE_RED = "rgb(198, 40, 40)"  # the dots' live colour (--accent)

READ_TAGS = """
const result = [];
for (const group of document.querySelectorAll('g.tag-dot')) {
  const row = document.querySelector('#tag-list tr[data-tag="' + group.dataset.tag + '"]');
  result.push({tag: group.dataset.tag, stale: group.classList.contains('stale'), age: group.dataset.age || '',
    shownAge: group.querySelector('text.tag-age')?.textContent ?? '', fill: getComputedStyle(group.querySelector('circle.dot')).fill,
    row: row ? Array.from(row.children).map(c => c.textContent) : null});
}
return result;
"""

READ_ZONE_ROWS = """
const result = {};
for (const row of document.querySelectorAll('#zones tr[data-zone]')) {
  result[row.dataset.zone] = {state: row.dataset.state, stale: row.classList.contains('stale'),
    age: row.querySelector('.zone-age')?.textContent ?? '', members: row.querySelector('.zone-members').textContent};
}
return result;
"""

READ_PAGE = """
// Written so that an older page without these elements reads as empty, and its checks fail rather than stop.
const banner = document.getElementById('source-banner');
return {source: document.body.dataset.source || '', stream: document.body.dataset.stream || '',
  banner: !banner || banner.hidden ? '' : banner.textContent,
  locator: document.getElementById('locator-status').textContent,
  metricsStale: document.getElementById('metrics').classList.contains('stale'),
  metricsAge: document.getElementById('metrics-age')?.textContent ?? '',
  agents: Array.from(document.querySelectorAll('#agent-list tr[data-agent-row]')).map(r => ({id: r.dataset.agentRow,
    status: r.children[1].textContent, seen: r.children[2].textContent, stale: r.classList.contains('stale')}))};
"""


def wait_until(predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()


def page(driver):
    return driver.execute_script(READ_PAGE)


def tags(driver):
    return driver.execute_script(READ_TAGS)


def zone_rows(driver):
    return driver.execute_script(READ_ZONE_ROWS)


def percent(p):
    return f"{int(p * 100 + 0.5)} %"


def lists_and_probabilities(driver, check, broker, map_document):
    """Item 7: a tag list with last seen, an agent list, and the probabilities the page receives."""
    shown = tags(driver)
    rows_ok = [t for t in shown if t["row"] and re.match(r"^\d+ (s|min|h) ago$", t["row"][2])]
    check(len(shown) > 0 and len(rows_ok) == len(shown),
          f"the tag list has a row with its last seen for each of {len(shown)} dots ({len(rows_ok)} do)")
    by_tag = {t["tag"]: t for t in shown}
    with_p, missing = 0, []
    for topic, position in broker.retained("/position"):
        tag = topic.split("/")[-2]
        if position.get("p") is None or tag not in by_tag or not by_tag[tag]["row"]:
            continue
        with_p += 1
        if percent(position["p"]) not in by_tag[tag]["row"][1]:
            missing.append(f"{tag}: {by_tag[tag]['row'][1]!r} lacks {percent(position['p'])}")
    check(with_p > 0 and len(missing) <= max(1, with_p // 10),
          f"the tag list shows the zone probability of {with_p - len(missing)} of {with_p} positions {missing[:2]}")
    rows = zone_rows(driver)
    members, wrong = 0, []
    for topic, occupancy in broker.retained("/occupancy"):
        key = f"{occupancy['floor']}-{occupancy['zone']}"
        for member in occupancy.get("tags", []):
            if member.get("p") is None:
                continue
            members += 1
            if percent(member["p"]) not in rows.get(key, {}).get("members", ""):
                wrong.append(f"{key}: {rows.get(key)} lacks {percent(member['p'])}")
    check(members > 0 and len(wrong) <= max(1, members // 10),
          f"the zone table shows how likely each of {members} members is {wrong[:2]}")
    agents = page(driver)["agents"]
    check(len(agents) == len(map_document["agents"]) and all(a["status"] == "online" for a in agents)
          and all(re.match(r"^since \d+ (s|min|h) ago$", a["seen"]) for a in agents),
          f"the agent list shows all {len(map_document['agents'])} agents online with since when {agents[:2]}")


def remember_history(driver, url, zone_keys):
    """The events shown and every zone's crossings, before web stops."""
    events = driver.execute_script("return Array.from(document.querySelectorAll('#events li')).map(l => l.textContent)")
    crossings = {}
    for key in zone_keys:
        with urllib.request.urlopen(url + "zones/" + key, timeout=10) as response:
            text = response.read().decode()
        crossings[key] = re.findall(r"<tr><td>\d\d:\d\d:\d\d UTC</td>.*?</tr>", text)
    return events, crossings


def page_lost(driver, check):
    """Item 6: with web gone, the page says so and greys everything (the page's own source)."""
    state = wait_until(lambda: page(driver)["source"] == "page-lost" and page(driver), 10) or page(driver)
    shown = tags(driver)
    check(state["source"] == "page-lost" and "lost whereabouts web" in state["banner"]
          and shown and all(t["stale"] and AGE.match(t["age"]) for t in shown),
          f"with web stopped the page says {state['banner']!r} and greys its {len(shown)} dots with their ages")


def history_kept(driver, check, url, before):
    """Item 7: after web's restart the events list and the zones' hours are what they were."""
    events, crossings = before
    after_events = driver.execute_script(
        "return Array.from(document.querySelectorAll('#events li')).map(l => l.textContent)")
    check(bool(events) and events[0] in after_events,
          f"the newest event before the restart is listed after it ({events[:1]} in {len(after_events)} events)")
    lost = []
    total = 0
    for key, rows in crossings.items():
        with urllib.request.urlopen(url + "zones/" + key, timeout=10) as response:
            text = response.read().decode()
        total += len(rows)
        lost += [f"{key}: {row}" for row in rows if row not in text]
    check(total > 0 and not lost, f"the {total} crossings of the zones' last hour survive the restart {lost[:2]}")


def silent_zones(driver, check):
    """Item 6: with agents silent, the dots inside an unknown zone are drawn stale, and only those."""
    def split():
        rows = zone_rows(driver)
        dots = tags(driver)
        zone_of = driver.execute_script(
            "const m = {}; for (const g of document.querySelectorAll('g.tag-dot')) { m[g.dataset.tag] = "
            "g.dataset.zoneKey || ''; } return m;")
        inside = [d for d in dots if rows.get(zone_of.get(d["tag"], ""), {}).get("state") == "unknown"]
        return (inside, dots, rows) if inside else None
    found = wait_until(split, 40)
    if not found:
        check(False, "some dot stands in a zone whose agents are silent")
        return
    inside, dots, rows = found
    source = page(driver)["source"]
    bad = [d["tag"] for d in inside if not d["stale"] or not AGE.match(d["age"]) or d["fill"] == LIVE_RED]
    check(not bad, f"{len(inside)} dots in unknown zones are grey with their ages, not the live colour {bad[:3]}")
    outside = [d for d in dots if d not in inside]
    check(source == "live" and all(not d["stale"] and d["fill"] == LIVE_RED for d in outside),
          f"the page stays live ({source}) and the {len(outside)} dots outside unknown zones with it")
    unknown_rows = [row for row in rows.values() if row["state"] == "unknown"]
    check(all(row["stale"] and AGE.match(row["age"]) for row in unknown_rows),
          f"the {len(unknown_rows)} unknown zones' rows are grey with how long they have been unknown")


def everything_stale(driver):
    shown = tags(driver)
    return shown and all(t["stale"] and AGE.match(t["age"]) and t["fill"] != LIVE_RED for t in shown)


def broker_lost(driver, check, broker_pid, broker_conf, out):
    """Item 6: web loses the broker while the locator and agents run: 'broker lost', not their going offline. The
    broker is stopped as a service manager stops it (SIGTERM), so it sends its clients' last wills as it goes: the
    page must not take them for the locator and agents leaving. Returns the restarted broker's process."""
    before = page(driver)
    online = [a["id"] for a in before["agents"] if a["status"] == "online"]
    os.kill(broker_pid, signal.SIGTERM)
    state = wait_until(lambda: page(driver)["source"] == "broker-lost" and page(driver), 10) or page(driver)
    check(state["source"] == "broker-lost" and "broker lost" in state["banner"] and "locator" not in state["banner"]
          and state["stream"] == "live",
          f"the broker stopped: the page says {state['banner']!r} (source {state['source']}, its stream to web "
          f"{state['stream']})")
    check(state["locator"] == "locator last said online",
          f"the locator is not reported offline but as last heard: {state['locator']!r}")
    agents = {a["id"]: a for a in state["agents"]}
    check(online and all(agents[i]["status"] == "online" and agents[i]["stale"] for i in online),
          f"the {len(online)} agents online before stay online, greyed as last known, not offline")
    check(everything_stale(driver) and state["metricsStale"] and state["metricsAge"].startswith("as of "),
          f"every dot and the figures go grey with their ages ({state['metricsAge']!r})")
    log = open(os.path.join(out, "mosquitto-restarted.log"), "w")
    restarted = subprocess.Popen(["mosquitto", "-c", broker_conf], stdout=log, stderr=log)
    back = wait_until(lambda: page(driver)["source"] == "live", 60)
    check(back, f"with the broker back, web and the locator reconnect and the page is live again "
          f"({page(driver)['source']})")
    return restarted


def locator_gone(driver, check, locator_pid, out):
    """Item 6: the locator killed (its will): dots, counts and the readings line go grey with their ages."""
    os.kill(locator_pid, signal.SIGKILL)
    state = wait_until(lambda: page(driver)["source"] == "locator-gone" and page(driver), 40) or page(driver)
    check(state["source"] == "locator-gone" and "locator is offline" in state["banner"]
          and "broker" not in state["banner"],
          f"the locator killed: its will arrives and the page says {state['banner']!r}")
    first = {t["tag"]: t["age"] for t in tags(driver)}
    check(everything_stale(driver), f"all {len(first)} dots are grey with their ages")
    rows = zone_rows(driver)
    published = [key for key, row in rows.items() if row["state"] in ("known", "unknown")]
    check(published and all(rows[key]["stale"] and AGE.match(rows[key]["age"]) for key in published),
          f"the {len(published)} zone counts are grey with their ages")
    check(state["metricsStale"] and state["metricsAge"].startswith("as of "),
          f"the readings/s line is grey, {state['metricsAge']!r}")
    time.sleep(2.5)
    later = {t["tag"]: t["age"] for t in tags(driver)}
    check(any(first.get(tag) != age for tag, age in later.items()), "the ages keep counting")
    driver.save_screenshot(os.path.join(out, "web-locator-gone.png"))


class FramingParent:
    """A page on another origin that frames the live page, served on `port`."""

    def __init__(self, port, url):
        html = f'<!DOCTYPE html><title>parent</title><iframe id="f" src="{url}" width="1200" height="900"></iframe>'

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{port}/"

    def framed(self, driver, seconds):
        """Whether the live page runs inside the frame (its floors drawn and its stream live)."""
        driver.get(self.url)
        def inside():
            driver.switch_to.default_content()
            driver.switch_to.frame(driver.find_element("id", "f"))
            try:
                return driver.execute_script(
                    "return document.getElementById('floors') !== null && document.body.dataset.stream === 'live'")
            finally:
                driver.switch_to.default_content()
        return wait_until(inside, seconds)


def framing(check, parent, driver, url, allowed):
    """Item 7: the page is framed only by the configured origins."""
    with urllib.request.urlopen(url, timeout=10) as response:
        policy = response.headers.get("Content-Security-Policy", "")
    framed = parent.framed(driver, 8 if allowed else 4)
    if allowed:
        check(framed and f"frame-ancestors {parent.url.rstrip('/')}" in policy,
              f"with --frame-ancestors {parent.url.rstrip('/')} the page runs framed by it ({policy[-60:]!r})")
    else:
        check(not framed and "frame-ancestors 'none'" in policy,
              f"by default another origin cannot frame the page ({policy[-30:]!r})")
