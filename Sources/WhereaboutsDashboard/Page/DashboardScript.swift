/// The page's script, served as `/app.js` (the page allows no inline script).
///
/// It reads the floors the server drew, opens `/events` (an `EventSource`, which reconnects on its own), applies the
/// snapshot, then each change newer than it. Every message is checked on arrival against ``PageSchema`` (embedded
/// at the top) and every field is read through `get(value, 'Message.field')`, which the schema tests find and check.
/// Names go into the page only as text (`textContent`, `data-` values), never as markup. Dots move by a CSS
/// transition of their transform, so they glide between updates.
///
/// Each tag's group carries `data-tag`, `data-floor`, `data-x`/`data-y` (metres) and `data-px`/`data-py` (its
/// target in the floor's SVG pixels), for tests that read the DOM.
enum DashboardScript {
    static let text = prologue + "\n  const SCHEMA = " + PageSchema.text + ";\n" + body

    private static let prologue = #"""
        'use strict';
        (function () {
          // The messages this page may receive, as the server's Swift types describe them (PageSchema): every
          // message is checked against it on arrival, and every field is read through the accessor get, which
          // names the message and the field.
        """#

    private static let body = #"""
          const SVG = 'http://www.w3.org/2000/svg';
          const body = document.body;
          const floors = new Map();
          for (const svg of document.querySelectorAll('svg.floor-map')) {
            floors.set(svg.dataset.floor, {
              svg: svg,
              scale: Number(svg.dataset.scale),
              originX: Number(svg.dataset.originX),
              originY: Number(svg.dataset.originY),
              accuracy: svg.querySelector('g.accuracy-layer'),
              dots: svg.querySelector('g.tag-layer'),
            });
          }
          const zones = new Map();
          for (const shape of document.querySelectorAll('svg polygon.zone[data-zone]')) {
            zones.set(shape.dataset.zone, { shape: shape, label: null, row: null, name: '' });
          }
          for (const label of document.querySelectorAll('svg text.zone-label[data-zone]')) {
            const entry = zones.get(label.dataset.zone);
            if (entry) { entry.label = label; }
          }
          for (const row of document.querySelectorAll('#zones tr[data-zone]')) {
            const entry = zones.get(row.dataset.zone);
            if (entry) { entry.row = row; entry.name = row.querySelector('.zone-name a').textContent; }
          }
          const agents = new Map();
          for (const shape of document.querySelectorAll('svg polygon.agent[data-agent]')) {
            agents.set(shape.dataset.agent, shape);
          }
          const tags = new Map();
          let events = [];
          let seq = -1;
          let query = '';

          function text(element, value) { element.textContent = value; }

          function own(object, key) { return Object.prototype.hasOwnProperty.call(object, key); }

          function isObject(candidate) {
            return typeof candidate === 'object' && candidate !== null && !Array.isArray(candidate);
          }

          // A field of a received message, named as 'Message.field'; a name the schema lacks is an error, not
          // undefined. The server's tests find every such read and check it against the schema.
          function get(message, field) {
            const dot = field.indexOf('.');
            const type = field.slice(0, dot);
            const name = field.slice(dot + 1);
            if (!own(SCHEMA.messages, type) || !own(SCHEMA.messages[type], name)) {
              throw new Error('the schema names no field ' + field);
            }
            return message[name];
          }

          // Whether a received value has exactly the type the schema gives: string, number, boolean, T? (or null),
          // [T], {T} (an object of T), or a message with exactly its fields.
          function conforms(candidate, type) {
            if (type.endsWith('?')) { return candidate === null || conforms(candidate, type.slice(0, -1)); }
            if (type.startsWith('[')) {
              const element = type.slice(1, -1);
              return Array.isArray(candidate) && candidate.every(function (item) { return conforms(item, element); });
            }
            if (type.startsWith('{')) {
              const member = type.slice(1, -1);
              return isObject(candidate) &&
                Object.keys(candidate).every(function (key) { return conforms(candidate[key], member); });
            }
            if (type === 'string' || type === 'number' || type === 'boolean') { return typeof candidate === type; }
            if (!own(SCHEMA.messages, type) || !isObject(candidate)) { return false; }
            const fields = SCHEMA.messages[type];
            const names = Object.keys(fields);
            return Object.keys(candidate).length === names.length && names.every(function (name) {
              return own(candidate, name) && conforms(candidate[name], fields[name]);
            });
          }

          // Every message enters here. One the schema does not describe is dropped, and the page says so
          // (data-schema-error on the body, and the console) rather than showing half of it.
          function receive(name, data) {
            const received = JSON.parse(data);
            if (conforms(received, SCHEMA.events[name])) { return received; }
            body.dataset.schemaError = name;
            console.error('whereabouts: a "' + name + '" event the schema does not describe', received);
            return null;
          }

          function placeTag(tag) {
            const id = get(tag, 'TagView.id');
            const floorNumber = String(get(tag, 'TagView.floor'));
            const floor = floors.get(floorNumber);
            let shown = tags.get(id);
            if (!floor) { if (shown) { removeTag(id); } return; }
            if (!shown) {
              const group = document.createElementNS(SVG, 'g');
              group.setAttribute('class', 'tag-dot');
              group.dataset.tag = id;
              const dot = document.createElementNS(SVG, 'circle');
              dot.setAttribute('r', '5');
              dot.setAttribute('class', 'dot');
              const name = document.createElementNS(SVG, 'text');
              name.setAttribute('x', '7');
              name.setAttribute('y', '13');
              name.setAttribute('class', 'tag-name');
              group.append(dot, name);
              const ring = document.createElementNS(SVG, 'circle');
              ring.setAttribute('class', 'tag-accuracy');
              ring.setAttribute('cx', '0');
              ring.setAttribute('cy', '0');
              shown = { group: group, ring: ring, name: name, data: null };
              tags.set(id, shown);
            }
            if (shown.group.parentNode !== floor.dots) {
              // A new tag, or one that changed floors: appear in place rather than glide across the page.
              shown.group.classList.add('placing');
              shown.ring.classList.add('placing');
              floor.dots.append(shown.group);
              floor.accuracy.append(shown.ring);
            }
            const x = get(tag, 'TagView.x');
            const y = get(tag, 'TagView.y');
            const px = Math.round((floor.originX + x * floor.scale) * 100) / 100;
            const py = Math.round((floor.originY - y * floor.scale) * 100) / 100;
            const move = 'translate(' + px + 'px, ' + py + 'px)';
            shown.group.style.transform = move;
            shown.ring.style.transform = move;
            shown.ring.setAttribute('r', String(Math.max(get(tag, 'TagView.accuracy'), 0) * floor.scale));
            const d = shown.group.dataset;
            d.floor = floorNumber; d.x = String(x); d.y = String(y);
            d.px = String(px); d.py = String(py);
            text(shown.name, get(tag, 'TagView.label'));
            shown.data = tag;
            highlight(shown);
            if (shown.group.classList.contains('placing')) {
              requestAnimationFrame(function () {
                requestAnimationFrame(function () {
                  shown.group.classList.remove('placing');
                  shown.ring.classList.remove('placing');
                });
              });
            }
          }

          function removeTag(id) {
            const shown = tags.get(id);
            if (!shown) { return; }
            shown.group.remove();
            shown.ring.remove();
            tags.delete(id);
          }

          function matches(tag) {
            const label = get(tag, 'TagView.label').toLowerCase();
            return query !== '' && (label.includes(query) || get(tag, 'TagView.id').toLowerCase().includes(query));
          }

          function highlight(shown) {
            const hit = matches(shown.data);
            shown.group.classList.toggle('highlight', hit);
            shown.group.classList.toggle('dimmed', query !== '' && !hit);
            shown.ring.classList.toggle('dimmed', query !== '' && !hit);
          }

          function search(typed) {
            query = typed.trim().toLowerCase();
            const hits = [];
            for (const shown of tags.values()) { highlight(shown); if (matches(shown.data)) { hits.push(shown.data); } }
            const result = document.getElementById('search-result');
            if (query === '') { text(result, ''); return; }
            if (hits.length === 0) { text(result, 'no tag matches'); return; }
            const first = hits[0];
            const zone = get(first, 'TagView.zone');
            text(result, hits.length === 1
              ? get(first, 'TagView.label') + ' is ' + (zone ? 'in ' + zone : 'outside every zone') + ', floor ' +
                get(first, 'TagView.floor')
              : hits.length + ' tags match');
            const hitFloors = new Set(hits.map(function (tag) { return String(get(tag, 'TagView.floor')); }));
            if (hitFloors.size === 1 && currentFloor() !== 'all') { showFloor(get(first, 'TagView.floor')); }
          }

          function applyZone(zone) {
            const shown = zones.get(get(zone, 'ZoneView.key'));
            if (!shown) { return; }
            const state = get(zone, 'ZoneView.state');
            const tally = get(zone, 'ZoneView.count');
            shown.shape.classList.toggle('zone-unknown', state === 'unknown');
            shown.shape.classList.toggle('zone-pending', state === 'pending');
            shown.shape.classList.toggle('zone-occupied', state === 'known' && tally > 0);
            shown.shape.classList.toggle('zone-empty', state === 'known' && tally === 0);
            const count = state === 'known' ? String(tally) : (state === 'unknown' ? 'unknown' : '–');
            if (shown.label) {
              text(shown.label, get(zone, 'ZoneView.name') + ' (' + count + ')');
              shown.label.dataset.state = state;
            }
            if (shown.row) {
              shown.row.dataset.state = state;
              const cell = shown.row.querySelector('.zone-count');
              text(cell, count);
              cell.dataset.count = state === 'known' ? String(tally) : '';
              text(shown.row.querySelector('.zone-members'),
                state === 'unknown' ? 'its agents are silent' : get(zone, 'ZoneView.members').join(', '));
            }
          }

          function time(seconds) {
            return new Date(seconds * 1000).toLocaleTimeString([], { hour12: false });
          }

          function drawEvents() {
            const list = document.getElementById('events');
            const items = events.slice(-15).reverse().map(function (event) {
              const kind = get(event, 'EventView.kind');
              const item = document.createElement('li');
              item.className = kind;
              const when = document.createElement('time');
              text(when, time(get(event, 'EventView.time')));
              const what = document.createElement('span');
              text(what, get(event, 'EventView.label') + (kind === 'enter' ? ' entered ' : ' left ') +
                get(event, 'EventView.zone'));
              item.append(when, what);
              return item;
            });
            list.replaceChildren(...items);
          }

          function number(value, digits) {
            return value === null || value === undefined ? '–' : Number(value).toFixed(digits);
          }

          function applyLocator(locator) {
            const status = document.getElementById('locator-status');
            const state = get(locator, 'LocatorView.status');
            text(status, 'locator ' + state);
            status.dataset.state = state;
            const metrics = document.getElementById('metrics');
            const figures = get(locator, 'LocatorView.metrics');
            if (figures === null) { text(metrics, 'no metrics yet'); return; }
            text(metrics, number(get(figures, 'LocatorFigures.readings_per_s'), 1) + ' readings/s · ' +
              get(figures, 'LocatorFigures.readings_rejected') + ' rejected · latency p50 ' +
              number(get(figures, 'LocatorFigures.latency_p50_ms'), 0) + ' ms, p99 ' +
              number(get(figures, 'LocatorFigures.latency_p99_ms'), 0) + ' ms · input lag p50 ' +
              number(get(figures, 'LocatorFigures.input_lag_p50_ms'), 0) + ' ms · ' +
              get(figures, 'LocatorFigures.tags_tracked') + ' tags · agents ' +
              get(figures, 'LocatorFigures.agents_online') + '/' + get(figures, 'LocatorFigures.agents_total') +
              ' online');
          }

          function applyAgent(id, online) {
            const shape = agents.get(id);
            if (!shape) { return; }
            shape.classList.toggle('agent-offline', online === false);
            shape.dataset.online = online === null ? '' : String(online);
          }

          function applySnapshot(snapshot) {
            seq = get(snapshot, 'DashboardSnapshot.seq');
            const seen = new Set();
            for (const tag of get(snapshot, 'DashboardSnapshot.tags')) { placeTag(tag); seen.add(get(tag, 'TagView.id')); }
            for (const id of Array.from(tags.keys())) { if (!seen.has(id)) { removeTag(id); } }
            for (const zone of get(snapshot, 'DashboardSnapshot.zones')) { applyZone(zone); }
            const online = get(snapshot, 'DashboardSnapshot.agents');
            for (const id of Object.keys(online)) { applyAgent(id, online[id]); }
            applyLocator(get(snapshot, 'DashboardSnapshot.locator'));
            events = get(snapshot, 'DashboardSnapshot.events');
            drawEvents();
            search(document.getElementById('tag-search').value);
            body.dataset.seq = String(seq);
          }

          // A change newer than the page's picture is applied and moves the page's number on; an older one is one
          // the snapshot already holds.
          function numbered(number, apply) {
            if (number <= seq) { return; }
            seq = number;
            apply();
            body.dataset.seq = String(seq);
          }

          function currentFloor() { return body.dataset.floor || 'all'; }

          function showFloor(floor) {
            const chosen = String(floor);
            body.dataset.floor = chosen;
            for (const view of document.querySelectorAll('.floor-view')) {
              view.hidden = chosen !== 'all' && view.dataset.floor !== chosen;
            }
            for (const button of document.querySelectorAll('#floor-picker button')) {
              button.setAttribute('aria-pressed', String(button.dataset.floor === chosen));
            }
            if (location.hash !== '#floor=' + chosen) { history.replaceState(null, '', '#floor=' + chosen); }
          }

          for (const button of document.querySelectorAll('#floor-picker button')) {
            button.addEventListener('click', function () { showFloor(button.dataset.floor); });
          }
          const pinned = /^#floor=(all|\d+)$/.exec(location.hash);
          showFloor(pinned && (pinned[1] === 'all' || floors.has(pinned[1])) ? pinned[1] : 'all');
          document.getElementById('tag-search').addEventListener('input', function (input) {
            search(input.target.value);
          });

          const source = new EventSource('/events');
          const streamState = document.getElementById('stream-state');
          source.addEventListener('open', function () { body.dataset.stream = 'live'; text(streamState, 'live'); });
          source.addEventListener('error', function () {
            body.dataset.stream = 'reconnecting';
            text(streamState, 'reconnecting…');
          });
          // Each event the schema names, with the message it carries.
          function listen(name, handler) {
            if (!own(SCHEMA.events, name)) { throw new Error('the schema names no event ' + name); }
            source.addEventListener(name, function (message) {
              const received = receive(name, message.data);
              if (received !== null) { handler(received); }
            });
          }
          listen('snapshot', applySnapshot);
          listen('tag', function (value) {
            numbered(get(value, 'TagChange.seq'), function () { placeTag(get(value, 'TagChange.tag')); });
          });
          listen('tag-removed', function (value) {
            numbered(get(value, 'TagRemoval.seq'), function () { removeTag(get(value, 'TagRemoval.id')); });
          });
          listen('zone', function (value) {
            numbered(get(value, 'ZoneChange.seq'), function () { applyZone(get(value, 'ZoneChange.zone')); });
          });
          listen('event', function (value) {
            numbered(get(value, 'EventChange.seq'), function () {
              events.push(get(value, 'EventChange.event'));
              if (events.length > 50) { events = events.slice(-50); }
              drawEvents();
            });
          });
          listen('locator', function (value) {
            numbered(get(value, 'LocatorChange.seq'), function () { applyLocator(get(value, 'LocatorChange.locator')); });
          });
          listen('agent', function (value) {
            numbered(get(value, 'AgentChange.seq'), function () {
              applyAgent(get(value, 'AgentChange.id'), get(value, 'AgentChange.online'));
            });
          });
        })();
        """#
}
