"""Drives a real Home Assistant Core against the locator and `whereabouts sim`, as a user would see it.

Run by scripts/check-home-assistant.sh with the Python of Home Assistant's venv (it imports aiohttp and paho-mqtt
from there). Everything listens on 127.0.0.1 only; every wait is bounded. Exits 0 when every check passed, 1 when
one failed, and prints a summary either way.
"""

import argparse
import asyncio
import copy
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import aiohttp

from harness import (AGENT_ENTITIES, CHECKS, TAG_ENTITIES, ZONE_ENTITIES, HomeAssistant, Mirror, check,
                     entities_of, expected_zone_view, slug, wait_until)
from presence import Presence, write_automations_file


class Run:
    def __init__(self, args):
        self.args = args
        self.out = args.out
        self.map = json.load(open(args.map))
        self.site = self.map["site"]["uuid"].lower()
        self.node = "whereabouts_" + self.site.replace("-", "")
        self.prefix = f"whereabouts/v1/{self.site}"
        self.broker = f"mqtt://127.0.0.1:{args.broker_port}"
        self.children: list[subprocess.Popen] = []
        self.locator = None
        self.sim = None

    # MARK: processes

    def spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(os.path.join(self.out, f"{name}.log"), "ab")
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.children.append(process)
        return process

    def stop(self, process, sig=signal.SIGTERM, timeout=20):
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def write_map(self, name: str, drop_zones=(), drop_tags=()) -> str:
        document = copy.deepcopy(self.map)
        document["zones"] = [z for z in document["zones"] if z["name"] not in drop_zones]
        document["tags"] = [t for t in document.get("tags", []) if t["name"] not in drop_tags]
        path = os.path.join(self.out, name)
        with open(path, "w") as file:
            json.dump(document, file, indent=1)
        return path

    def spawn_hass(self):
        return self.spawn("hass", [self.args.hass, "--config", self.config_dir, "--skip-pip", "--log-no-color"])

    def start_locator(self, map_path: str):
        empty = os.path.join(self.out, "locator.conf")
        open(empty, "a").close()
        self.locator = self.spawn(
            "locator",
            [os.path.join(self.args.bin, "whereabouts-locator"), "--map", map_path, "--broker", self.broker,
             "--config", empty, "--warm-up", "3", "--log-level", "info"])

    def start_sim(self, tags: int):
        self.sim = self.spawn(
            "sim",
            [os.path.join(self.args.bin, "whereabouts"), "sim", "--map", self.args.map, "--tags", str(tags),
             "--seed", "7", "--duration", "3600", "--broker", self.broker, "--speed", "1"])

    def cleanup(self):
        for process in reversed(self.children):
            self.stop(process, timeout=10)

    # MARK: Home Assistant

    def write_config(self, config_dir: str, port: int):
        os.makedirs(config_dir, exist_ok=True)
        with open(os.path.join(config_dir, "configuration.yaml"), "w") as file:
            file.write(f"""# A minimal Home Assistant for scripts/check-home-assistant.sh: loopback only, no default_config.
homeassistant:
  name: Whereabouts check
  latitude: 51.5
  longitude: 0
  elevation: 0
  unit_system: metric
  time_zone: UTC
  currency: EUR
  country: GB
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
websocket_api:
config:
onboarding:
person:
recorder:
  db_url: sqlite:///{config_dir}/home-assistant_v2.db
  commit_interval: 1
automation: !include automations.yaml
logger:
  default: warning
""")

    async def onboard(self, ha: HomeAssistant, base: str):
        client_id = base + "/"
        async with ha.session.post(
            base + "/api/onboarding/users",
            json={"client_id": client_id, "name": "Owner", "username": "owner", "password": "check-password-1",
                  "language": "en"}) as response:
            check("onboarding: owner user created", response.status == 200, f"HTTP {response.status}")
            code = (await response.json())["auth_code"]
        async with ha.session.post(
            base + "/auth/token", data={"grant_type": "authorization_code", "code": code, "client_id": client_id}
        ) as response:
            tokens = await response.json()
        ha.token = tokens["access_token"]
        await ha.post("/api/onboarding/core_config", {})
        await ha.post("/api/onboarding/analytics", {})
        await ha.post("/api/onboarding/integration", {"client_id": client_id, "redirect_uri": base + "/?auth_callback=1"})
        ha.token = await ha.command(
            {"type": "auth/long_lived_access_token", "client_name": "check-home-assistant", "lifespan": 1})
        ha.ws = None
        onboarding = await ha.get("/api/onboarding")
        check("onboarding: every step done", all(step["done"] for step in onboarding), json.dumps(onboarding))
        flow = await ha.post("/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        if flow.get("type") == "menu":
            flow = await ha.post(f"/api/config/config_entries/flow/{flow['flow_id']}", {"next_step_id": "broker"})
        result = await ha.post(
            f"/api/config/config_entries/flow/{flow['flow_id']}",
            {"broker": "127.0.0.1", "port": self.args.broker_port})
        check("MQTT config entry created through the config-flow API", result.get("type") == "create_entry",
              json.dumps(result)[:300])

    # MARK: the checks

    def unique(self, obj: str) -> str:
        return f"{self.node}_{obj}"

    async def registry(self, ha: HomeAssistant):
        entities = await ha.command({"type": "config/entity_registry/list"})
        devices = await ha.command({"type": "config/device_registry/list"})
        areas = await ha.command({"type": "config/area_registry/list"})
        return entities, devices, areas

    def zone_entities(self, zone) -> dict[str, tuple[str, str]]:
        return entities_of(ZONE_ENTITIES, self.unique(f"f{zone['floor']}_z{zone['minor']}"), slug(zone["name"]),
                        zone["name"])

    def tag_entities(self, tag) -> dict[str, tuple[str, str]]:
        return entities_of(TAG_ENTITIES, self.unique(tag["id"]), slug(tag["name"]), tag["name"])

    def expected_entities(self, zones, tags):
        """unique_id -> (entity_id, friendly name) for the map's zones and tags, its agents and the locator."""
        expected = {self.unique("locator"): (f"binary_sensor.{slug(self.map['site']['name'])}_locator",
                                             f"{self.map['site']['name']} Locator")}
        for zone in zones:
            expected.update(self.zone_entities(zone))
        for tag in tags:
            expected.update(self.tag_entities(tag))
        for agent in self.map["agents"]:
            expected.update(entities_of(AGENT_ENTITIES, self.unique(f"agent_{agent['id']}"),
                                        f"agent_{slug(agent['id'])}", f"Agent {agent['id']}"))
        return expected

    async def check_entities(self, ha: HomeAssistant):
        zones, tags = self.map["zones"], self.map["tags"]
        expected = self.expected_entities(zones, tags)

        async def all_there():
            entities, _, _ = await self.registry(ha)
            ours = {e["unique_id"] for e in entities if e["platform"] == "mqtt"}
            return set(expected) <= ours

        await wait_until("every discovered entity", 60, all_there)
        entities, devices, areas = await self.registry(ha)
        by_unique = {e["unique_id"]: e for e in entities if e["platform"] == "mqtt"}
        states = await ha.states()
        missing = [u for u in expected if u not in by_unique]
        check("entities: every zone, tag and the locator discovered", not missing,
              f"{len(expected)} expected" + (f", missing {missing[:4]}" if missing else ""))
        wrong_ids = [(by_unique[u]["entity_id"], e[0]) for u, e in expected.items()
                     if u in by_unique and by_unique[u]["entity_id"] != e[0]]
        check("entity ids are not doubled (sensor.alice_zone, not sensor.alice_alice_zone)", not wrong_ids,
              str(wrong_ids[:4]))
        wrong_names = [(states.get(e[0], {}).get("attributes", {}).get("friendly_name"), e[1])
                       for e in expected.values()
                       if states.get(e[0], {}).get("attributes", {}).get("friendly_name") != e[1]]
        check("friendly names: device name then entity name, once", not wrong_names, str(wrong_names[:4]))
        units = {states.get(f"sensor.{slug(z['name'])}_count", {}).get("attributes", {}).get("unit_of_measurement")
                 for z in zones}
        check("zone counts have a unit", units == {"tags"}, str(units))
        area_names = {a["area_id"]: a["name"] for a in areas}
        devices_by_name = {}
        for device in devices:
            devices_by_name.setdefault(device["name"], []).append(device)
        bad_zones = []
        for zone in zones:
            found = [d for d in devices_by_name.get(zone["name"], [])
                     if [self.node + f"_f{zone['floor']}_z{zone['minor']}"] == [i[1] for i in d["identifiers"]]]
            if not found or area_names.get(found[0]["area_id"]) != zone["name"]:
                bad_zones.append(zone["name"])
        check("devices: one per zone, in the area of the same name", not bad_zones, f"wrong: {bad_zones}")
        site_device = devices_by_name.get(self.map["site"]["name"], [])
        check("devices: the site's device carries the site's name", len(site_device) == 1)
        floors = [d["name"] for d in devices if d["name"] in {f["name"] for f in self.map["floors"]}]
        check("devices: no floor device named without its site", not floors, str(floors))
        tag_devices = [t["name"] for t in tags if t["name"] not in devices_by_name]
        check("devices: one per named tag", not tag_devices, f"missing {tag_devices}")

    async def compare_zones(self, ha: HomeAssistant, label: str) -> bool:
        """Counts, occupied and who-is-in-zone in Home Assistant equal the retained occupancy at the same moment."""
        zones = self.current_zones
        last_problems = []
        for _ in range(40):
            before = self.mirror.snapshot(self.prefix + "/floors/")
            states = await ha.states()
            after = self.mirror.snapshot(self.prefix + "/floors/")
            if before != after:
                await asyncio.sleep(0.2)
                continue
            problems = []
            for zone in zones:
                topic = f"{self.prefix}/floors/{zone['floor']}/zones/{zone['minor']}/occupancy"
                view = expected_zone_view(after.get(topic))
                if view is None:
                    problems.append(f"{zone['name']}: no retained occupancy")
                    continue
                count, occupied, who = view
                sensor = states.get(f"sensor.{slug(zone['name'])}_count", {})
                binary = states.get(f"binary_sensor.{slug(zone['name'])}_occupied", {})
                shown = (sensor.get("state"), binary.get("state"), sensor.get("attributes", {}).get("who"))
                if shown != (count, occupied, who):
                    problems.append(f"{zone['name']}: HA {shown} vs retained {(count, occupied, who)}")
            if not problems:
                occupied_zones = sum(1 for z in zones if states.get(
                    f"binary_sensor.{slug(z['name'])}_occupied", {}).get("state") == "on")
                return check(f"{label}: counts, occupied and who equal the retained occupancy",
                             True, f"{len(zones)} zones, {occupied_zones} occupied")
            last_problems = problems
            await asyncio.sleep(0.25)
        return check(f"{label}: counts, occupied and who equal the retained occupancy", False,
                     "; ".join(last_problems[:3]))

    async def compare_person(self, ha: HomeAssistant, label: str, seen: set) -> bool:
        alice = next(t for t in self.map["tags"] if t["name"] == "Alice")
        topic = f"{self.prefix}/tags/{alice['id']}/location"
        for _ in range(40):
            location = self.mirror.last.get(topic)
            states = await ha.states()
            person = states.get("person.alice", {}).get("state")
            tracker = states.get("device_tracker.alice", {}).get("state")
            if location and location == self.mirror.last.get(topic) and person == tracker == location:
                seen.add(person)
                return check(f"{label}: person.alice follows device_tracker.alice", True, f"both {person!r}")
            await asyncio.sleep(0.25)
        return check(f"{label}: person.alice follows device_tracker.alice", False,
                     f"person {person!r}, tracker {tracker!r}, retained {location!r}")

    async def count_writes(self, ha: HomeAssistant, seconds: float, during):
        """state_changed events per entity over `seconds`, while `during` runs; and the recorder's rows."""
        ws = await ha.connect_ws()
        await ws.send_json({"id": 1, "type": "subscribe_events", "event_type": "state_changed"})
        counts: dict[str, int] = {}

        async def collect():
            async for message in ws:
                data = json.loads(message.data)
                if data.get("type") == "event":
                    entity = data["event"]["data"]["entity_id"]
                    counts[entity] = counts.get(entity, 0) + 1

        collector = asyncio.create_task(collect())
        zone_messages_before = {t["name"]: self.mirror.count.get(f"{self.prefix}/tags/{t['id']}/zone", 0)
                                for t in self.map["tags"]}
        position_before = {t["name"]: self.mirror.count.get(f"{self.prefix}/tags/{t['id']}/position", 0)
                           for t in self.map["tags"]}
        started_wall = time.time()
        started = time.monotonic()
        await during()
        remaining = seconds - (time.monotonic() - started)
        if remaining > 0:
            await asyncio.sleep(remaining)
        elapsed = time.monotonic() - started
        ended_wall = time.time()
        collector.cancel()
        await ws.close()
        await asyncio.sleep(2)  # the recorder commits every second
        zone_messages = {t["name"]: self.mirror.count.get(f"{self.prefix}/tags/{t['id']}/zone", 0)
                         - zone_messages_before[t["name"]] for t in self.map["tags"]}
        positions = {t["name"]: self.mirror.count.get(f"{self.prefix}/tags/{t['id']}/position", 0)
                     - position_before[t["name"]] for t in self.map["tags"]}
        rows = {}
        database = sqlite3.connect(os.path.join(self.config_dir, "home-assistant_v2.db"))
        for entity, number in database.execute(
                "SELECT states_meta.entity_id, COUNT(*) FROM states JOIN states_meta "
                "ON states.metadata_id = states_meta.metadata_id "
                "WHERE states.last_updated_ts BETWEEN ? AND ? GROUP BY states_meta.entity_id",
                (started_wall, ended_wall)):
            rows[entity] = number
        database.close()
        return counts, rows, zone_messages, positions, elapsed

    async def main(self):
        port = self.args.ha_port
        base = f"http://127.0.0.1:{port}"
        self.config_dir = os.path.join(self.out, "ha-config")
        self.write_config(self.config_dir, port)
        hass_log = os.path.join(self.config_dir, "home-assistant.log")
        started = time.monotonic()
        write_automations_file(self.config_dir)
        self.hass = self.spawn_hass()
        self.mirror = Mirror(self.args.broker_port, self.site)
        async with aiohttp.ClientSession() as session:
            ha = HomeAssistant(base, session)

            async def up():
                async with session.get(base + "/api/onboarding") as response:
                    return response.status == 200

            if not check("Home Assistant answers on its loopback port",
                         bool(await wait_until("Home Assistant's HTTP API", 240, up)),
                         f"after {time.monotonic() - started:.0f} s"):
                return
            await self.onboard(ha, base)

            self.current_zones = self.map["zones"]
            self.live_map = self.write_map("map-live.json")
            self.start_locator(self.live_map)
            self.start_sim(self.args.tags)
            print("== entities, names, devices, areas", flush=True)
            await self.check_entities(ha)
            presence = Presence(self, ha)
            watcher = asyncio.create_task(presence.watch())
            await presence.set_up()
            await self.window(ha, presence)
            await self.outages(ha, presence)
            await self.removals(ha, presence)
            watcher.cancel()
            print(f"  automations fired: {presence.summary_line()}", flush=True)
            self.log_check(hass_log)

    async def window(self, ha: HomeAssistant, presence: Presence):
        """Tags moving at real time: zones, people and zone.home compared at moments; the recorder's writes."""
        print(f"== {self.args.window:.0f} s of simulated tags at real time: consistency and state writes",
              flush=True)
        person_states: set = set()
        home_readings: list = []
        presence.window_started()

        async def during():
            rounds = max(int(self.args.window // 20), 1)
            for index in range(rounds):
                await asyncio.sleep(self.args.window / rounds - 3)
                await self.compare_zones(ha, f"moment {index + 1}")
                await self.compare_person(ha, f"moment {index + 1}", person_states)
                await presence.compare_home(f"moment {index + 1}", home_readings)

        counts, rows, zone_messages, positions, elapsed = await self.count_writes(ha, self.args.window, during)
        minutes = elapsed / 60
        print(f"  state writes per tag per minute over {elapsed:.0f} s (recorder rows; state_changed events):",
              flush=True)
        worst = 0.0
        consistent = True
        for tag in self.map["tags"]:
            entities = [f"sensor.{slug(tag['name'])}_zone", f"device_tracker.{slug(tag['name'])}"]
            recorded = sum(rows.get(e, 0) for e in entities)
            events = sum(counts.get(e, 0) for e in entities)
            rate = recorded / minutes
            worst = max(worst, rate)
            print(f"    {tag['name']:<12} {rate:5.1f}/min ({recorded} rows, {events} events; "
                  f"{zone_messages[tag['name']]} zone changes, {positions[tag['name']]} positions published)",
                  flush=True)
            # Each entity writes at most once per zone summary published (plus one for a state that was
            # already set when the window opened).
            if any(rows.get(e, 0) > zone_messages[tag["name"]] + 1 for e in entities):
                consistent = False
        check("state writes follow zone changes, not positions", consistent)
        # The issue measured 1.3 rows a second per tag (78 a minute) when every position was a state.
        check("state writes per tag per minute stay far below one per position (< 30)", worst < 30,
              f"worst {worst:.1f}/min")
        await presence.window_checks(home_readings)
        await presence.battery("Alice")
        await presence.battery_level("Alice", self.map["agents"][0]["id"])
        await presence.agent(self.map["agents"][0]["id"])

    async def outages(self, ha: HomeAssistant, presence: Presence):
        """Agents silent, the locator killed, Home Assistant restarted, agents offline, a tag lost."""
        timeout = self.map.get("model", {}).get("tag_timeout", 30)
        print(f"== agents connected but silent for {timeout + 15} s (the tag timeout is {timeout} s)", flush=True)
        await presence.silence(self.sim, timeout + 15)
        print("== the locator killed, then started again", flush=True)
        await presence.locator_down(lambda: self.start_locator(self.live_map))
        print("== Home Assistant restarted", flush=True)
        await presence.restart_home_assistant(self.expected_entities(self.map["zones"], self.map["tags"]))

        print("== agents silent (the simulator killed: the broker publishes their wills)", flush=True)
        self.stop(self.sim, signal.SIGKILL)

        async def unknown():
            states = await ha.states()
            names = [f"sensor.{slug(z['name'])}_count" for z in self.current_zones]
            tags = [f"sensor.{slug(t['name'])}_zone" for t in self.map["tags"]]
            return all(states.get(e, {}).get("state") == "unknown" for e in names + tags) and states

        states = await wait_until("every zone and tag to turn unknown", 60, unknown)
        check("agents silent: every zone count and tag zone is unknown", bool(states))
        if states:
            trackers = {states.get(f"device_tracker.{slug(t['name'])}", {}).get("state") for t in self.map["tags"]}
            check("agents silent: device trackers unknown too", trackers == {"unknown"}, str(trackers))
            await self.compare_zones(ha, "agents silent")

        print("== a lost tag: the simulator back with 2 tags; Forklift 3 is no longer heard", flush=True)
        self.start_sim(2)
        forklift = next(t for t in self.map["tags"] if t["name"] == "Forklift 3")

        async def lost():
            states = await ha.states()
            return (states.get("sensor.forklift_3_zone", {}).get("state") == "lost"
                    and states.get("device_tracker.forklift_3", {}).get("state") == "not_home") and states

        states = await wait_until("Forklift 3 to be lost", 90, lost)
        check("lost tag: its sensor says lost and its tracker not_home", bool(states))
        await presence.person_left("Forklift 3", "forklift_left")
        check("lost tag: its retained position is cleared",
              self.mirror.last.get(f"{self.prefix}/tags/{forklift['id']}/position") == "")
        await self.compare_zones(ha, "after the loss")

    async def removals(self, ha: HomeAssistant, presence: Presence):
        """A zone and a tag removed by SIGHUP, more by a restart, and a tag put back."""
        print("== removal: SIGHUP with a map without Server Room and Forklift 3", flush=True)
        smaller = self.write_map("map-smaller.json", drop_zones=["Server Room"], drop_tags=["Forklift 3"])
        shutil_copy(smaller, self.live_map)
        self.locator.send_signal(signal.SIGHUP)
        await self.check_removed(ha, "SIGHUP", ["Server Room"], ["Forklift 3"])

        print("== removal: restart with a map also without Lab and Bob (learned from the broker at start)",
              flush=True)
        self.stop(self.locator)
        smallest = self.write_map("map-smallest.json", drop_zones=["Server Room", "Lab"],
                                  drop_tags=["Forklift 3", "Bob"])
        self.start_locator(smallest)
        await self.check_removed(ha, "restart", ["Server Room", "Lab"], ["Forklift 3", "Bob"])
        self.current_zones = [z for z in self.map["zones"] if z["name"] not in ("Server Room", "Lab")]
        await asyncio.sleep(5)
        await self.compare_zones(ha, "after the restart")

        print("== Bob put back in the map: the same entities", flush=True)
        self.stop(self.locator)
        self.start_locator(self.live_map)
        await presence.tag_back("Bob", self.tag_entities(self.map["tags"][1]))

    def log_check(self, hass_log: str):
        print("== home-assistant.log (both runs)", flush=True)
        log = "".join(open(path, errors="replace").read() for path in (hass_log + ".1", hass_log)
                      if os.path.exists(path))
        bad = [line for line in log.splitlines()
               if re.search(r"Template variable (error|warning)|Erroneous JSON|JSON result was not|"
                            r"(ERROR|WARNING).*(mqtt|whereabouts)", line)]
        check("no template, JSON or MQTT error or warning in home-assistant.log", not bad,
              f"{len(bad)} lines" + (f", first: {bad[0][:300]}" if bad else ""))


    async def check_removed(self, ha: HomeAssistant, label: str, zones: list[str], tags: list[str]):
        gone = {}
        for zone in (z for z in self.map["zones"] if z["name"] in zones):
            gone.update(self.zone_entities(zone))
        for tag in (t for t in self.map["tags"] if t["name"] in tags):
            gone.update(self.tag_entities(tag))
        gone_unique, gone_ids = set(gone), {entity_id for entity_id, _ in gone.values()}

        async def removed():
            entities, devices, _ = await self.registry(ha)
            left = [e["entity_id"] for e in entities if e["unique_id"] in gone_unique]
            names = [d["name"] for d in devices if d["name"] in set(zones) | set(tags)]
            states = await ha.states()
            stale = [e for e in states if e in gone_ids]
            return (not left and not names and not stale) or None

        done = await wait_until(f"{zones} and {tags} to disappear", 60, removed)
        entities, devices, _ = await self.registry(ha)
        left = [e["entity_id"] for e in entities if e["unique_id"] in gone_unique]
        names = [d["name"] for d in devices if d["name"] in set(zones) | set(tags)]
        check(f"{label}: no entity, device or state left of {', '.join(zones + tags)}", bool(done),
              f"entities left {left}, devices left {names}" if not done else "")
        kept = self.expected_entities([z for z in self.map["zones"] if z["name"] not in zones],
                                      [t for t in self.map["tags"] if t["name"] not in tags])
        by_unique = {e["unique_id"] for e in entities}
        check(f"{label}: everything else stays", set(kept) <= by_unique,
              f"missing {sorted(set(kept) - by_unique)[:3]}")


def shutil_copy(source: str, target: str):
    with open(source) as reader, open(target + ".tmp", "w") as writer:
        writer.write(reader.read())
    os.replace(target + ".tmp", target)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--hass", required=True)
    parser.add_argument("--map", required=True)
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--ha-port", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tags", type=int, default=5)
    parser.add_argument("--window", type=float, default=120)
    args = parser.parse_args()
    run = Run(args)
    started = time.monotonic()
    try:
        asyncio.run(asyncio.wait_for(run.main(), args.window + 900))
    except Exception as error:  # noqa: BLE001 - any failure is a failed check, reported with the rest
        check("the run finished", False, f"{type(error).__name__}: {error}")
    finally:
        run.cleanup()
        run.mirror.stop() if hasattr(run, "mirror") else None
    failed = [c for c in CHECKS if not c[1]]
    print(f"\n== summary ({time.monotonic() - started:.0f} s; logs in {args.out})")
    for name, ok, detail in CHECKS:
        print(f"  {'ok  ' if ok else 'FAIL'} {name}" + (f" ({detail})" if detail and not ok else ""))
    print(f"check-home-assistant: {len(CHECKS) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed or not CHECKS else 0)


if __name__ == "__main__":
    main()
