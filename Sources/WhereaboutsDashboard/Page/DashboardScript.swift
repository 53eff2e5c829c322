/// The page's script, served as `/app.js` (the page allows no inline script).
///
/// It reads the floors the server drew, opens `/events` (an `EventSource`, which reconnects on its own), applies the
/// snapshot, then each change newer than it. Every message is checked on arrival against ``PageSchema`` (embedded
/// at the top) and every field is read through `get(value, 'Message.field')`, which the schema tests find and check.
/// Names go into the page only as text (`textContent`, `data-` values), never as markup. Dots move by a CSS
/// transition of their transform, so they glide between updates.
///
/// Each tag's group carries `data-tag`, `data-floor`, `data-x`/`data-y` (metres), `data-px`/`data-py` (its
/// target in the floor's SVG pixels), `data-zone-key` and, when stale, `data-age`, for tests that read the DOM.
///
/// Freshness: the page greys (class `stale`) what its sources no longer vouch for and writes its age: everything
/// when its own stream from web is down or web's source (``SourceView``) is not live, and a dot alone when its zone
/// is unknown. `data-source` on the body and the banner say which source is lost.
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
            agents.set(shape.dataset.agent, { shape: shape, row: null, online: null, since: null });
          }
          for (const row of document.querySelectorAll('#agent-list tr[data-agent-row]')) {
            const entry = agents.get(row.dataset.agentRow);
            if (entry) { entry.row = row; }
          }
          const tags = new Map();
          let events = [];
          let seq = -1;
          let query = '';
          // Freshness: the dashboard's clock minus this page's, the source's state (SourceView), whether this page
          // lost its stream from web, and when the locator's figures arrived.
          let skew = 0;
          let source = null;
          let streamLost = false;
          let figuresSeen = null;
          let locatorStatus = 'unknown';

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
              const ago = document.createElementNS(SVG, 'text');
              ago.setAttribute('x', '7');
              ago.setAttribute('y', '23');
              ago.setAttribute('class', 'tag-age');
              group.append(dot, name, ago);
              const ring = document.createElementNS(SVG, 'circle');
              ring.setAttribute('class', 'tag-accuracy');
              ring.setAttribute('cx', '0');
              ring.setAttribute('cy', '0');
              const row = document.createElement('tr');
              row.dataset.tag = id;
              for (const kind of ['tag-label', 'tag-where', 'tag-seen']) {
                const cell = document.createElement('td');
                cell.className = kind;
                row.append(cell);
              }
              document.querySelector('#tag-list tbody').append(row);
              shown = { group: group, ring: ring, name: name, ago: ago, row: row, data: null };
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
            const zoneKey = get(tag, 'TagView.zone_key');
            d.zoneKey = zoneKey === null ? '' : zoneKey;
            text(shown.name, get(tag, 'TagView.label'));
            shown.data = tag;
            const cells = shown.row.children;
            text(cells[0], get(tag, 'TagView.label'));
            const zone = get(tag, 'TagView.zone');
            const others = get(tag, 'TagView.zones').filter(function (share) {
              return get(share, 'ZoneShareView.name') !== zone;
            }).map(function (share) {
              return get(share, 'ZoneShareView.name') + ' ' + percent(get(share, 'ZoneShareView.p'));
            });
            text(cells[1], (zone === null ? 'no zone' : zone) + ' ' + percent(get(tag, 'TagView.p')) +
              (others.length ? ' (' + others.join(', ') + ')' : ''));
            freshenTag(shown, isStale());
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
            shown.row.remove();
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
            shown.data = zone;
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
              text(shown.row.querySelector('.zone-members'), state === 'unknown' ? 'its agents are silent'
                : get(zone, 'ZoneView.members').map(function (member) {
                  return get(member, 'ZoneMemberView.label') + ' ' + percent(get(member, 'ZoneMemberView.p'));
                }).join(', '));
            }
            freshenZone(shown, isStale());
            for (const tagShown of tags.values()) {
              if (get(tagShown.data, 'TagView.zone_key') === get(zone, 'ZoneView.key')) { freshenTag(tagShown, isStale()); }
            }
          }

          function percent(p) { return p === null ? '' : Math.round(p * 100) + ' %'; }

          function clock() { return Date.now() / 1000 + skew; }

          // An age as the terminal writes it: 12 s, 3 min, 2 h.
          function age(since) {
            const s = Math.max(0, Math.floor(clock() - since));
            return s < 120 ? s + ' s' : (s < 7200 ? Math.floor(s / 60) + ' min' : Math.floor(s / 3600) + ' h');
          }

          // Nothing from the locator is current when this page lost web, or web says its source is not live.
          function isStale() {
            return streamLost || source === null || get(source, 'SourceView.state') !== 'live';
          }

          // A dot is stale with everything else, or alone when its zone's agents are silent.
          function freshenTag(shown, all) {
            const key = get(shown.data, 'TagView.zone_key');
            const area = key === null ? undefined : zones.get(key);
            const stale = all || (area !== undefined && area.data !== undefined &&
              get(area.data, 'ZoneView.state') === 'unknown');
            const ago = age(get(shown.data, 'TagView.seen'));
            for (const element of [shown.group, shown.ring, shown.row]) { element.classList.toggle('stale', stale); }
            shown.group.dataset.age = stale ? ago : '';
            text(shown.ago, stale ? ago : '');
            text(shown.row.children[2], ago + ' ago');
          }

          function freshenZone(shown, all) {
            if (!shown.row || shown.data === undefined) { return; }
            const state = get(shown.data, 'ZoneView.state');
            const since = state === 'unknown' ? get(shown.data, 'ZoneView.unknown_since') : get(shown.data, 'ZoneView.seen');
            const stale = state === 'unknown' || (all && state !== 'pending');
            shown.row.classList.toggle('stale', stale);
            shown.shape.classList.toggle('stale', stale);
            text(shown.row.querySelector('.zone-age'), stale && since !== null ? age(since) : '');
          }

          function freshenAgent(entry, all) {
            if (!entry.row) { return; }
            const cells = entry.row.children;
            text(cells[1], entry.online === null ? 'not said' : (entry.online ? 'online' : 'offline'));
            text(cells[2], entry.since === null ? '' : (entry.online ? 'since ' : 'last seen ') + age(entry.since) + ' ago');
            entry.row.dataset.online = entry.online === null ? '' : String(entry.online);
            entry.row.classList.toggle('stale', all && streamOrBrokerLost());
          }

          function streamOrBrokerLost() {
            const state = source === null ? '' : get(source, 'SourceView.state');
            return streamLost || state === 'broker-lost' || state === 'broker-connecting';
          }

          // Every second and after every change: stale classes and ages, and the banner saying which source is lost.
          function freshen() {
            const all = isStale();
            body.classList.toggle('stale', all);
            const state = streamLost ? 'page-lost' : (source === null ? 'unknown' : get(source, 'SourceView.state'));
            body.dataset.source = state;
            const banner = document.getElementById('source-banner');
            let says = '';
            if (streamLost) {
              says = 'lost whereabouts web: nothing shown is current';
            } else if (state !== 'live' && source !== null) {
              const since = get(source, 'SourceView.since');
              says = get(source, 'SourceView.sentence') + (since === null ? '' : ' · ' + age(since) + ' ago');
            }
            text(banner, says);
            banner.hidden = says === '';
            for (const shown of tags.values()) { freshenTag(shown, all); }
            for (const shown of zones.values()) { freshenZone(shown, all); }
            for (const entry of agents.values()) { freshenAgent(entry, all); }
            const stamp = document.getElementById('metrics-age');
            text(stamp, all && figuresSeen !== null ? 'as of ' + age(figuresSeen) + ' ago' : '');
            document.getElementById('metrics').classList.toggle('stale', all);
            const pill = document.getElementById('locator-status');
            // Back on a new session, web forgot the locator's word until the broker repeats it.
            const said = state === 'locator-unknown' ? 'unknown' : locatorStatus;
            text(pill, streamOrBrokerLost() ? 'locator last said ' + said : 'locator ' + said);
            pill.classList.toggle('stale', streamOrBrokerLost());
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
            locatorStatus = state;
            text(status, 'locator ' + state);
            status.dataset.state = state;
            figuresSeen = get(locator, 'LocatorView.seen');
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

          function applyAgent(id, online, since) {
            const entry = agents.get(id);
            if (!entry) { return; }
            entry.shape.classList.toggle('agent-offline', online === false);
            entry.shape.dataset.online = online === null ? '' : String(online);
            entry.online = online;
            entry.since = since;
            freshenAgent(entry, isStale());
          }

          function applySource(view) {
            source = view;
            skew = get(view, 'SourceView.now') - Date.now() / 1000;
            freshen();
          }

          function applySnapshot(snapshot) {
            seq = get(snapshot, 'DashboardSnapshot.seq');
            const seen = new Set();
            for (const tag of get(snapshot, 'DashboardSnapshot.tags')) { placeTag(tag); seen.add(get(tag, 'TagView.id')); }
            for (const id of Array.from(tags.keys())) { if (!seen.has(id)) { removeTag(id); } }
            for (const zone of get(snapshot, 'DashboardSnapshot.zones')) { applyZone(zone); }
            const online = get(snapshot, 'DashboardSnapshot.agents');
            const since = get(snapshot, 'DashboardSnapshot.agents_since');
            for (const id of Object.keys(online)) { applyAgent(id, online[id], own(since, id) ? since[id] : null); }
            applyLocator(get(snapshot, 'DashboardSnapshot.locator'));
            events = get(snapshot, 'DashboardSnapshot.events');
            drawEvents();
            search(document.getElementById('tag-search').value);
            applySource(get(snapshot, 'DashboardSnapshot.source'));
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

          const stream = new EventSource('/events');
          const streamState = document.getElementById('stream-state');
          stream.addEventListener('open', function () {
            body.dataset.stream = 'live';
            text(streamState, 'live');
            streamLost = false;
            freshen();
          });
          stream.addEventListener('error', function () {
            body.dataset.stream = 'reconnecting';
            text(streamState, 'reconnecting…');
            streamLost = true;
            freshen();
          });
          setInterval(freshen, 1000);
          // Each event the schema names, with the message it carries.
          function listen(name, handler) {
            if (!own(SCHEMA.events, name)) { throw new Error('the schema names no event ' + name); }
            stream.addEventListener(name, function (message) {
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
              applyAgent(get(value, 'AgentChange.id'), get(value, 'AgentChange.online'), get(value, 'AgentChange.since'));
            });
          });
          listen('source', function (value) {
            numbered(get(value, 'SourceChange.seq'), function () { applySource(get(value, 'SourceChange.source')); });
          });
        })();
        """#
}
