"""The presence, event and availability checks of check.py, as a Home Assistant user would build them: automations
made through Home Assistant's config API (a numeric_state trigger on zone.home, a device trigger of a tag's device,
a state trigger on a tag's event entity, a person leaving home), counted through the websocket API against what the
locator published; silence of the agents longer than the tag timeout; the locator killed; Home Assistant restarted.
"""

import asyncio
import json
import os
import re
import signal
import time

import yaml

from harness import HomeAssistant, check, slug, wait_until

# What the automations below fire, counted by `what` (and the event entity's event type).
CHECK_EVENT = "whereabouts_check"


def fire(what: str, **data) -> list[dict]:
    return [{"event": CHECK_EVENT, "event_data": {"what": what, **data}}]


class Presence:
    def __init__(self, run, ha: HomeAssistant):
        self.run = run
        self.ha = ha
        self.fired: list[dict] = []
        self.changes: list[tuple[float, str, str | None, str | None]] = []
        self.tags = {t["name"]: t for t in run.map["tags"]}
        self.people = ["Alice", "Bob", "Forklift 3"]

    def tag_topic(self, name: str, last: str) -> str:
        return f"{self.run.prefix}/tags/{self.tags[name]['id']}/{last}"

    # MARK: watching Home Assistant

    async def watch(self):
        """Counts the check's events and the state changes of zone.home, persons and trackers, for the whole run."""
        while True:
            try:
                ws = await self.ha.connect_ws()
                await ws.send_json({"id": 1, "type": "subscribe_events", "event_type": CHECK_EVENT})
                await ws.send_json({"id": 2, "type": "subscribe_events", "event_type": "state_changed"})
                async for message in ws:
                    data = json.loads(message.data)
                    if data.get("type") != "event":
                        continue
                    event = data["event"]
                    if event["event_type"] == CHECK_EVENT:
                        self.fired.append(event["data"])
                        continue
                    entity = event["data"]["entity_id"]
                    if entity == "zone.home" or entity.split(".")[0] in ("person", "device_tracker"):
                        old, new = event["data"].get("old_state"), event["data"].get("new_state")
                        self.changes.append((time.monotonic(), entity, old and old["state"], new and new["state"]))
            except (ConnectionError, OSError, RuntimeError, asyncio.TimeoutError):
                pass  # Home Assistant restarting: subscribe again once it answers.
            await asyncio.sleep(1)

    def count(self, what: str, **match) -> int:
        return sum(1 for f in self.fired if f.get("what") == what and all(f.get(k) == v for k, v in match.items()))

    # MARK: setting up, as a user would in the UI

    async def automation(self, key: str, alias: str, triggers: list, actions: list, conditions=()):
        await self.ha.post(f"/api/config/automation/config/{key}",
                           {"id": key, "alias": alias, "triggers": triggers, "conditions": list(conditions),
                            "actions": actions, "mode": "queued", "max": 100})

    async def set_up(self):
        """The automations first (a numeric_state trigger fires on a crossing, not on a state already above), then
        the people."""
        entities = await self.ha.command({"type": "config/entity_registry/list"})
        tracker = next(e for e in entities if e["entity_id"] == "device_tracker.alice")
        triggers = await self.ha.command({"type": "device_automation/trigger/list", "device_id": tracker["device_id"]})
        entered = [t for t in triggers if t.get("domain") == "mqtt" and t.get("type") == "entered"]
        check("device triggers: Alice's device offers \"entered\" for every zone",
              len(entered) == len(self.run.map["zones"]), f"{len(entered)} of {len(self.run.map['zones'])}")
        readme = readme_automations("README.md")
        check("README: its Home Assistant section holds the automations the check runs",
              {"Someone is home", "Forklift 3 left home", "Alice's enter/exit events"} <= set(readme),
              str(sorted(readme)))
        for alias, key, actions in (
                ("Someone is home", "check_home_occupied", fire("home_occupied")),
                ("Alice's enter/exit events", "check_alice_events",
                 fire("alice_event", event_type="{{ trigger.to_state.attributes.event_type }}")),
                ("Forklift 3 left home", "check_forklift_left", fire("forklift_left"))):
            automation = readme.get(alias, {})
            await self.automation(key, alias, automation.get("triggers", []), actions,
                                  automation.get("conditions", []))
        await self.automation("check_alice_entered", "Alice entered a room", entered, fire("alice_entered"))
        states = await wait_until("the automations to load", 30, lambda: self.automations_on(4))
        check("automations made through the config API are loaded and on", bool(states))
        for name in self.people:
            await self.ha.command({"type": "person/create", "name": name,
                                   "device_trackers": [f"device_tracker.{slug(name)}"]})

        async def counted():
            home = (await self.ha.states()).get("zone.home", {}).get("state")
            return (home == str(len(self.heard())) and home != "0") or None

        # The people were just made: zone.home counts them up one by one before the window's flips are counted.
        await wait_until("zone.home to count the people", 30, counted)

    async def automations_on(self, number: int):
        states = await self.ha.states()
        on = [e for e, s in states.items() if e.startswith("automation.") and s["state"] == "on"]
        return len(on) >= number and on

    # MARK: during the window

    def heard(self) -> list[str]:
        """The people whose tag's retained zone summary says known: at home."""
        people = []
        for name in self.people:
            payload = self.run.mirror.last.get(self.tag_topic(name, "zone"))
            if payload and json.loads(payload).get("state") == "known":
                people.append(name)
        return people

    async def compare_home(self, label: str, readings: list) -> bool:
        """zone.home counts every person whose tag is heard, in a room or not."""
        for _ in range(40):
            before = self.heard()
            home = (await self.ha.states()).get("zone.home", {}).get("state")
            if before == self.heard() and home == str(len(before)):
                readings.append(home)
                return True
            await asyncio.sleep(0.25)
        readings.append(home)
        return check(f"{label}: zone.home counts the people whose tags are heard", False,
                     f"zone.home {home!r}, heard {before}")

    def window_started(self):
        self.window_start = (time.monotonic(), len(self.run.mirror.log), len(self.fired))

    def alice_events(self, since: int) -> list[dict]:
        topic = self.tag_topic("Alice", "events")
        return [json.loads(p) for t, p in self.run.mirror.log[since:] if t == topic and p]

    async def window_checks(self, readings: list):
        started, log_index, _ = self.window_start
        await asyncio.sleep(3)  # the last events' automations run
        check("zone.home counts people in rooms as home at every moment", all(r not in ("0", None) for r in readings)
              and len(readings) > 0, f"zone.home read {readings}")
        flips = [c for c in self.changes if c[1] == "zone.home" and c[0] >= started]
        check("zone.home does not flip while the tags move between rooms", len(flips) == 0,
              f"{len(flips)} changes: {[c[2:] for c in flips[:5]]}")
        check("automation on zone.home (numeric_state above 0) fired", self.count("home_occupied") >= 1,
              f"{self.count('home_occupied')} times")
        events = self.alice_events(log_index)
        enters = sum(1 for e in events if e["event"] == "enter")
        exits = len(events) - enters
        fired = sum(1 for f in self.fired[self.window_start[2]:] if f.get("what") == "alice_entered")
        check("device trigger \"Alice: <room> entered\" fired once per enter published", fired == enters and enters > 0,
              f"{fired} firings for {enters} enters")
        seen = [f for f in self.fired[self.window_start[2]:] if f.get("what") == "alice_event"]
        got = (sum(1 for f in seen if f.get("event_type") == "enter"), sum(1 for f in seen if f.get("event_type") == "exit"))
        check("event entity event.alice_events received every enter and exit", got == (enters, exits) and enters > 0,
              f"HA enter/exit {got}, published {(enters, exits)}")
        await self.compare_zone_event()

    async def compare_zone_event(self):
        """A zone's event entity shows the last event of that zone, with its event type and who."""
        zone_events = [(t, json.loads(p)) for t, p in self.run.mirror.log if "/zones/" in t and p]
        if not zone_events:
            check("a zone's event entity shows its last event", False, "no zone event published")
            return
        _, last = zone_events[-1]
        zone = next(z for z in self.run.map["zones"] if z["floor"] == last["floor"] and z["minor"] == last["zone"])
        topic = f"{self.run.prefix}/floors/{last['floor']}/zones/{last['zone']}/events"

        async def shown():
            state = (await self.ha.states()).get(f"event.{slug(zone['name'])}_events", {})
            newest = [json.loads(p) for t, p in self.run.mirror.log if t == topic and p][-1]
            attributes = state.get("attributes", {})
            return (attributes.get("event_type") == newest["event"] and attributes.get("tag") == newest["tag"]) or None

        check(f"the zone's event entity (event.{slug(zone['name'])}_events) shows its last event and who",
              bool(await wait_until("the zone's event entity", 10, shown, 0.25)))

    async def battery(self, name: str):
        """The tag's battery sensor shows the millivolts the locator published from its Eddystone-TLM frames."""
        topic = self.tag_topic(name, "battery")

        async def shown():
            retained = self.run.mirror.last.get(topic)
            state = (await self.ha.states()).get(f"sensor.{slug(name)}_battery", {})
            unit = state.get("attributes", {}).get("unit_of_measurement")
            return (retained and state.get("state") == retained and unit == "mV" and state) or None

        state = await wait_until(f"sensor.{slug(name)}_battery", 30, shown)
        check(f"battery: sensor.{slug(name)}_battery shows the voltage the tag reports (Eddystone-TLM)", bool(state),
              f"{state.get('state')} mV" if state else f"retained {self.run.mirror.last.get(topic)!r}")

    async def battery_level(self, name: str, agent: str):
        """A GATT job's battery level (an agent's result, as `whereabouts tag battery` gets one) reaches the tag's
        battery sensor in percent through the locator, beside the voltage sensor, which keeps its value."""
        tag, voltage = self.tags[name]["id"], self.run.mirror.last.get(self.tag_topic(name, "battery"))
        result = {"id": "check-ha-1", "tag": tag, "status": "ok", "values": {"battery": 87}}
        self.run.mirror.client.publish(f"{self.run.prefix}/agents/{agent}/gatt/results", json.dumps(result), qos=1)
        entity = f"sensor.{slug(name)}_battery_level"

        async def shown():
            states = await self.ha.states()
            state, attributes = states.get(entity, {}), states.get(entity, {}).get("attributes", {})
            ok = (state.get("state") == "87" and attributes.get("unit_of_measurement") == "%"
                  and attributes.get("device_class") == "battery"
                  and self.run.mirror.last.get(self.tag_topic(name, "battery_level")) == "87")
            return (ok and (state, states.get(f"sensor.{slug(name)}_battery", {}).get("state"))) or None

        shown_states = await wait_until(entity, 30, shown)
        check(f"battery level: {entity} shows 87 % from a GATT job's result (device class battery), and "
              f"sensor.{slug(name)}_battery still the TLM voltage", bool(shown_states) and shown_states[1] == voltage,
              f"voltage {shown_states[1]} mV (published {voltage})" if shown_states
              else f"{(await self.ha.states()).get(entity)}")

    async def agent(self, agent: str):
        """An agent's device: connected, its last batch a time, its readings a second what the locator published."""
        topic = f"{self.run.prefix}/locator/agents/{agent}/activity"
        entity = f"agent_{slug(agent)}"

        async def shown():
            retained = self.run.mirror.last.get(topic)
            states = await self.ha.states()
            if not retained:
                return None
            activity = json.loads(retained)
            status = states.get(f"binary_sensor.{entity}_status", {}).get("state")
            rate = states.get(f"sensor.{entity}_readings", {}).get("state")
            last = states.get(f"sensor.{entity}_last_batch", {}).get("state", "")
            ok = (status == "on" and rate is not None and float(rate) == activity["readings_per_s"]
                  and last.startswith(time.strftime("%Y-%m-%dT%H:%M", time.gmtime(activity["last_batch"]))))
            return (ok and (status, rate, last)) or None

        shown_states = await wait_until(f"agent {agent}'s device", 90, shown)
        check(f"agent {agent}: connected, last batch and readings a second as the locator published them",
              bool(shown_states), str(shown_states) if shown_states else f"retained {self.run.mirror.last.get(topic)!r}")

    # MARK: silence, availability, restart

    async def silence(self, sim, seconds: float):
        """The agents stay connected but send nothing for longer than the tag timeout (the simulator stopped), then
        come back: no tag may be said lost, no tracker or person not_home."""
        started, log_index = time.monotonic(), len(self.run.mirror.log)
        sim.send_signal(signal.SIGSTOP)
        await asyncio.sleep(seconds)
        sim.send_signal(signal.SIGCONT)
        resumed = time.monotonic()

        async def known_again():
            return len(self.heard()) == len(self.people) or None

        back = await wait_until("every tag to be known again", 60, known_again, 0.25)
        back_after = time.monotonic() - resumed
        await asyncio.sleep(10)  # and they stay known
        lost = [(t.split("/")[-2], json.loads(p)["state"]) for t, p in self.run.mirror.log[log_index:]
                if t.endswith("/zone") and p and json.loads(p).get("state") == "lost"]
        away = [c for c in self.changes if c[0] >= started and c[3] == "not_home"]
        check(f"agents silent {seconds:.0f} s (> tag timeout), then back: no tag said lost", not lost,
              f"{len(lost)} lost: {lost[:3]}")
        check("silence: no tracker or person went not_home", not away, str([c[1:] for c in away[:4]]))
        check("silence: every tag known again after the agents came back", bool(back),
              f"after {back_after:.1f} s" if back else f"heard {self.heard()}")

    async def locator_down(self, start_locator):
        """The locator killed: every entity it feeds goes unavailable, the agents' status stays; back on restart."""
        follows = ["device_tracker.alice", "sensor.alice_zone", "event.alice_events", "event.kitchen_events",
                   "sensor.kitchen_count"]
        agent = f"binary_sensor.agent_{slug(self.run.map['agents'][0]['id'])}_status"
        killed = time.monotonic()
        self.run.stop(self.run.locator, signal.SIGKILL)

        async def unavailable():
            states = await self.ha.states()
            return all(states.get(e, {}).get("state") == "unavailable" for e in follows) and states

        states = await wait_until("the locator's entities to go unavailable", 60, unavailable, 0.1)
        check("locator killed: its tag, zone and event entities go unavailable", bool(states),
              f"after {time.monotonic() - killed:.1f} s")
        if states:
            check("locator killed: its connectivity sensor is off, the agents' status stays on",
                  states.get("binary_sensor.demo_office_locator", {}).get("state") == "off"
                  and states.get(agent, {}).get("state") == "on",
                  f"locator {states.get('binary_sensor.demo_office_locator', {}).get('state')}, "
                  f"{agent} {states.get(agent, {}).get('state')}")
        start_locator()

        async def available():
            states = await self.ha.states()
            return all(states.get(e, {}).get("state") not in ("unavailable", None) for e in follows) or None

        check("locator back: its entities are available again",
              bool(await wait_until("the locator's entities to come back", 60, available)))

    async def restart_home_assistant(self, expected: dict):
        """Home Assistant stopped and started: every entity keeps its id, the people and automations stay."""
        self.run.stop(self.run.hass, signal.SIGTERM, timeout=60)
        stopped = time.monotonic()
        self.run.hass = self.run.spawn_hass()

        async def up():
            async with self.ha.session.get(self.ha.base + "/api/", headers=self.ha.headers) as response:
                return response.status == 200

        if not check("Home Assistant restarted and answers", bool(await wait_until("Home Assistant", 240, up)),
                     f"after {time.monotonic() - stopped:.0f} s"):
            return
        self.ha.ws = None

        async def settled():
            states = await self.ha.states()
            return (all(states.get(e[0], {}).get("state") not in (None, "unavailable") for e in expected.values())
                    and states.get("zone.home", {}).get("state") == str(len(self.heard())) and states)

        states = await wait_until("the entities to come back after the restart", 120, settled)
        entities = await self.ha.command({"type": "config/entity_registry/list"})
        ids = {e["unique_id"]: e["entity_id"] for e in entities if e["platform"] == "mqtt"}
        moved = [(u, ids.get(u), e[0]) for u, e in expected.items() if ids.get(u) != e[0]]
        check("Home Assistant restarted: every entity keeps its unique_id and entity_id", not moved, str(moved[:3]))
        check("Home Assistant restarted: states back, zone.home counts the heard people again", bool(states),
              f"zone.home {states.get('zone.home', {}).get('state') if states else None}, heard {self.heard()}")
        check("Home Assistant restarted: the automations are still on", bool(await self.automations_on(4)))

    async def person_left(self, name: str, what: str):
        """A lost tag's person leaves home, and the automation on that (person from home to not_home) fires."""
        async def left():
            state = (await self.ha.states()).get(f"person.{slug(name)}", {}).get("state")
            return (state == "not_home" and self.count(what) >= 1) or None

        done = await wait_until(f"person.{slug(name)} to leave", 30, left)
        check(f"lost tag: person.{slug(name)} went not_home and the automation \"left home\" fired", bool(done),
              f"fired {self.count(what)} times")

    async def tag_back(self, name: str, expected: dict):
        """A tag taken out of the map (its entities removed) and put back gets the same entity ids (`expected`: the
        tag's entities, unique_id -> (entity_id, name)), and its tracker says home again. Home Assistant itself takes
        a removed tracker off every person (the person integration listens for registry removals), so the person made
        for it must be given it again: said, not asserted."""
        async def back():
            entities = await self.ha.command({"type": "config/entity_registry/list"})
            ids = {e["unique_id"]: e["entity_id"] for e in entities if e["platform"] == "mqtt"}
            states = await self.ha.states()
            tracker = states.get(f"device_tracker.{slug(name)}", {}).get("state")
            same = all(ids.get(u) == e[0] for u, e in expected.items())
            return (same and tracker == "home") or None

        check(f"{name} back in the map: the same entity ids, and device_tracker.{slug(name)} is home again",
              bool(await wait_until(f"{name}'s entities to come back", 90, back)))
        people = await self.ha.command({"type": "person/list"})
        person = next((p for p in people.get("storage", []) if p["name"] == name), {})
        print(f"  (person.{slug(name)} now tracks {person.get('device_trackers')}: Home Assistant dropped the "
              "tracker from the person when the tag left the map)", flush=True)

    def summary_line(self) -> str:
        return ", ".join(f"{what}={self.count(what)}" for what in
                         ("home_occupied", "alice_entered", "alice_event", "forklift_left"))


def readme_automations(path: str) -> dict[str, dict]:
    """The automations in the README's Home Assistant section, by alias."""
    text = open(path).read()
    section = text[text.index("## Home Assistant\n"):]
    section = section[:section.index("\n## ", 5)]
    found = {}
    for block in re.findall(r"```yaml\n(.*?)```", section, re.S):
        document = yaml.safe_load(block)
        if isinstance(document, dict) and isinstance(document.get("automation"), list):
            found.update({automation["alias"]: automation for automation in document["automation"]})
    return found


def write_automations_file(config_dir: str):
    path = os.path.join(config_dir, "automations.yaml")
    if not os.path.exists(path):
        with open(path, "w") as file:
            file.write("[]\n")
