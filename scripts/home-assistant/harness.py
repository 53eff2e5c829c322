"""What the Home Assistant check is made of: its verdicts, the broker's mirror, a Home Assistant client and a bounded
wait. Imported by check.py and presence.py (run with the Python of Home Assistant's venv)."""

import asyncio
import json
import re
import time

import aiohttp
import paho.mqtt.client as mqtt

CHECKS: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str = "") -> bool:
    CHECKS.append((name, ok, detail))
    print(f"  [{'ok' if ok else 'FAIL'}] {name}" + (f": {detail}" if detail else ""), flush=True)
    return ok


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


# The entities the locator's discovery makes for each zone, tag and agent: the check's one list of them (what must
# be discovered, what must go when a zone or a tag leaves the map, what must come back with a tag). Each row is
# (unique_id suffix, entity id domain, entity id suffix, friendly name suffix); a tag's tracker is named after the
# tag alone.
ZONE_ENTITIES = (
    ("_count", "sensor", "_count", " Count"),
    ("_occupied", "binary_sensor", "_occupied", " Occupied"),
    ("_events", "event", "_events", " Events"),
)
TAG_ENTITIES = (
    ("_zone", "sensor", "_zone", " Zone"),
    ("_tracker", "device_tracker", "", ""),
    ("_events", "event", "_events", " Events"),
    ("_battery", "sensor", "_battery", " Battery"),
    ("_battery_level", "sensor", "_battery_level", " Battery level"),
)
AGENT_ENTITIES = (
    ("_status", "binary_sensor", "_status", " Status"),
    ("_last_batch", "sensor", "_last_batch", " Last batch"),
    ("_readings", "sensor", "_readings", " Readings"),
)


def entities_of(table, unique_stem: str, id_stem: str, name: str) -> dict[str, tuple[str, str]]:
    """unique_id -> (entity_id, friendly name) of one zone's, tag's or agent's entities, from one of the tables
    above: `unique_stem` is the unique_id before the suffix, `id_stem` the entity id's object id before it."""
    return {unique_stem + u: (f"{domain}.{id_stem}{e}", name + n) for u, domain, e, n in table}


class Mirror:
    """The broker's view: the last payload of every topic under the site and Home Assistant's discovery prefix."""

    def __init__(self, port: int, site: str):
        self.last: dict[str, str] = {}
        self.count: dict[str, int] = {}
        # Every message on a tag's or a zone's events topic, and every tag zone summary, in order: (topic, payload).
        self.log: list[tuple[str, str]] = []
        self.changed = time.monotonic()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="check-ha-mirror")
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe([(f"whereabouts/v1/{site}/#", 1), ("homeassistant/#", 1)])
        self.client.loop_start()

    def _message(self, _client, _userdata, message):
        payload = message.payload.decode("utf-8", "replace")
        self.last[message.topic] = payload
        self.count[message.topic] = self.count.get(message.topic, 0) + 1
        if message.topic.endswith("/events") or message.topic.endswith("/zone"):
            self.log.append((message.topic, payload))
        self.changed = time.monotonic()

    def snapshot(self, prefix: str) -> dict[str, str]:
        return {topic: payload for topic, payload in list(self.last.items()) if topic.startswith(prefix)}

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


class HomeAssistant:
    def __init__(self, base: str, session: aiohttp.ClientSession):
        self.base = base
        self.session = session
        self.token = ""
        self.ws = None
        self.next_id = 1

    @property
    def headers(self):
        return {"Authorization": f"Bearer {self.token}"}

    async def get(self, path: str):
        async with self.session.get(self.base + path, headers=self.headers) as response:
            response.raise_for_status()
            return await response.json()

    async def post(self, path: str, body: dict):
        async with self.session.post(self.base + path, headers=self.headers, json=body) as response:
            text = await response.text()
            if response.status >= 300:
                raise RuntimeError(f"POST {path}: {response.status} {text}")
            return json.loads(text) if text else None

    async def connect_ws(self):
        ws = await self.session.ws_connect(self.base + "/api/websocket")
        assert (await ws.receive_json())["type"] == "auth_required"
        await ws.send_json({"type": "auth", "access_token": self.token})
        reply = await ws.receive_json()
        if reply["type"] != "auth_ok":
            raise RuntimeError(f"websocket auth: {reply}")
        return ws

    async def command(self, message: dict):
        if self.ws is None or self.ws.closed:
            # A command connection left idle (while another one counts events) may have been closed: reconnect.
            self.ws = await self.connect_ws()
        message = dict(message, id=self.next_id)
        self.next_id += 1
        try:
            await self.ws.send_json(message)
        except (aiohttp.ClientError, ConnectionError):
            self.ws = await self.connect_ws()
            await self.ws.send_json(message)
        while True:
            reply = await asyncio.wait_for(self.ws.receive_json(), 30)
            if reply.get("id") == message["id"] and reply.get("type") == "result":
                if not reply.get("success"):
                    raise RuntimeError(f"{message['type']}: {reply.get('error')}")
                return reply.get("result")

    async def states(self) -> dict[str, dict]:
        return {state["entity_id"]: state for state in await self.get("/api/states")}


async def wait_until(what: str, timeout: float, probe, interval: float = 1.0):
    """Calls `probe` until it returns a truthy value; returns it, or None after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await probe()
        except (aiohttp.ClientError, ConnectionError, asyncio.TimeoutError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            print(f"  (gave up waiting for {what} after {timeout:.0f} s)", flush=True)
            return None
        await asyncio.sleep(interval)


def expected_zone_view(occupancy: str | None):
    """What Home Assistant must show for a zone, from its retained occupancy payload."""
    if not occupancy:
        return None
    document = json.loads(occupancy)
    known = document["state"] == "known"
    who = [member.get("name") or member["id"] for member in document["tags"]]
    count = str(document["count"]) if known else "unknown"
    occupied = ("on" if document["count"] > 0 else "off") if known else "unknown"
    return count, occupied, who
