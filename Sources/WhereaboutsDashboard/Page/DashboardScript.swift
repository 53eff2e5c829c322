/// The page's script, served as `/app.js` (the page allows no inline script).
///
/// It reads the floors the server drew, opens `/events` (an `EventSource`, which reconnects on its own), applies the
/// snapshot, then each change newer than it. Names go into the page only as text (`textContent`, `data-` values),
/// never as markup. Dots move by a CSS transition of their transform, so they glide between updates.
///
/// Each tag's group carries `data-tag`, `data-floor`, `data-x`/`data-y` (metres) and `data-px`/`data-py` (its
/// target in the floor's SVG pixels), for tests that read the DOM.
enum DashboardScript {
    static let text = #"""
        'use strict';
        (function () {
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
            const zone = zones.get(label.dataset.zone);
            if (zone) { zone.label = label; }
          }
          for (const row of document.querySelectorAll('#zones tr[data-zone]')) {
            const zone = zones.get(row.dataset.zone);
            if (zone) { zone.row = row; zone.name = row.querySelector('.zone-name a').textContent; }
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

          function placeTag(tag) {
            const floor = floors.get(String(tag.floor));
            let shown = tags.get(tag.id);
            if (!floor) { if (shown) { removeTag(tag.id); } return; }
            if (!shown) {
              const group = document.createElementNS(SVG, 'g');
              group.setAttribute('class', 'tag-dot');
              group.dataset.tag = tag.id;
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
              tags.set(tag.id, shown);
            }
            if (shown.group.parentNode !== floor.dots) {
              // A new tag, or one that changed floors: appear in place rather than glide across the page.
              shown.group.classList.add('placing');
              shown.ring.classList.add('placing');
              floor.dots.append(shown.group);
              floor.accuracy.append(shown.ring);
            }
            const px = Math.round((floor.originX + tag.x * floor.scale) * 100) / 100;
            const py = Math.round((floor.originY - tag.y * floor.scale) * 100) / 100;
            const move = 'translate(' + px + 'px, ' + py + 'px)';
            shown.group.style.transform = move;
            shown.ring.style.transform = move;
            shown.ring.setAttribute('r', String(Math.max(tag.accuracy, 0) * floor.scale));
            const d = shown.group.dataset;
            d.floor = String(tag.floor); d.x = String(tag.x); d.y = String(tag.y);
            d.px = String(px); d.py = String(py);
            text(shown.name, tag.label);
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
            return query !== '' && (tag.label.toLowerCase().includes(query) || tag.id.toLowerCase().includes(query));
          }

          function highlight(shown) {
            const hit = matches(shown.data);
            shown.group.classList.toggle('highlight', hit);
            shown.group.classList.toggle('dimmed', query !== '' && !hit);
            shown.ring.classList.toggle('dimmed', query !== '' && !hit);
          }

          function search(value) {
            query = value.trim().toLowerCase();
            const hits = [];
            for (const shown of tags.values()) { highlight(shown); if (matches(shown.data)) { hits.push(shown.data); } }
            const result = document.getElementById('search-result');
            if (query === '') { text(result, ''); return; }
            if (hits.length === 0) { text(result, 'no tag matches'); return; }
            const first = hits[0];
            text(result, hits.length === 1
              ? first.label + ' is ' + (first.zone ? 'in ' + first.zone : 'outside every zone') + ', floor ' + first.floor
              : hits.length + ' tags match');
            const hitFloors = new Set(hits.map(function (tag) { return String(tag.floor); }));
            if (hitFloors.size === 1 && currentFloor() !== 'all') { showFloor(first.floor); }
          }

          function applyZone(zone) {
            const shown = zones.get(zone.key);
            if (!shown) { return; }
            const state = zone.state;
            shown.shape.classList.toggle('zone-unknown', state === 'unknown');
            shown.shape.classList.toggle('zone-pending', state === 'pending');
            shown.shape.classList.toggle('zone-occupied', state === 'known' && zone.count > 0);
            shown.shape.classList.toggle('zone-empty', state === 'known' && zone.count === 0);
            const count = state === 'known' ? String(zone.count) : (state === 'unknown' ? 'unknown' : '–');
            if (shown.label) { text(shown.label, zone.name + ' (' + count + ')'); shown.label.dataset.state = state; }
            if (shown.row) {
              shown.row.dataset.state = state;
              const cell = shown.row.querySelector('.zone-count');
              text(cell, count);
              cell.dataset.count = state === 'known' ? String(zone.count) : '';
              text(shown.row.querySelector('.zone-members'),
                state === 'unknown' ? 'its agents are silent' : zone.members.join(', '));
            }
          }

          function time(seconds) {
            return new Date(seconds * 1000).toLocaleTimeString([], { hour12: false });
          }

          function drawEvents() {
            const list = document.getElementById('events');
            const items = events.slice(-15).reverse().map(function (event) {
              const item = document.createElement('li');
              item.className = event.kind;
              const when = document.createElement('time');
              text(when, time(event.time));
              const what = document.createElement('span');
              text(what, event.label + (event.kind === 'enter' ? ' entered ' : ' left ') + event.zone);
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
            text(status, 'locator ' + locator.status);
            status.dataset.state = locator.status;
            const metrics = document.getElementById('metrics');
            if (locator.readings_accepted === undefined) { text(metrics, 'no metrics yet'); return; }
            text(metrics, number(locator.readings_per_s, 1) + ' readings/s · ' + locator.readings_rejected +
              ' rejected · latency p50 ' + number(locator.latency_p50_ms, 0) + ' ms, p99 ' +
              number(locator.latency_p99_ms, 0) + ' ms · input lag p50 ' + number(locator.input_lag_p50_ms, 0) +
              ' ms · ' + locator.tags_tracked + ' tags · agents ' +
              locator.agents_online + '/' + locator.agents_total + ' online');
          }

          function applyAgent(id, online) {
            const shape = agents.get(id);
            if (!shape) { return; }
            shape.classList.toggle('agent-offline', online === false);
            shape.dataset.online = online === null ? '' : String(online);
          }

          function applySnapshot(snapshot) {
            seq = snapshot.seq;
            const seen = new Set();
            for (const tag of snapshot.tags) { placeTag(tag); seen.add(tag.id); }
            for (const id of Array.from(tags.keys())) { if (!seen.has(id)) { removeTag(id); } }
            for (const zone of snapshot.zones) { applyZone(zone); }
            for (const id of Object.keys(snapshot.agents)) { applyAgent(id, snapshot.agents[id]); }
            applyLocator(snapshot.locator);
            events = snapshot.events;
            drawEvents();
            search(document.getElementById('tag-search').value);
            body.dataset.seq = String(seq);
          }

          function change(handler) {
            return function (message) {
              const value = JSON.parse(message.data);
              if (value.seq <= seq) { return; }
              seq = value.seq;
              handler(value);
              body.dataset.seq = String(seq);
            };
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
          document.getElementById('tag-search').addEventListener('input', function (event) {
            search(event.target.value);
          });

          const source = new EventSource('/events');
          const streamState = document.getElementById('stream-state');
          source.addEventListener('open', function () { body.dataset.stream = 'live'; text(streamState, 'live'); });
          source.addEventListener('error', function () {
            body.dataset.stream = 'reconnecting';
            text(streamState, 'reconnecting…');
          });
          source.addEventListener('snapshot', function (message) { applySnapshot(JSON.parse(message.data)); });
          source.addEventListener('tag', change(function (value) { placeTag(value.tag); }));
          source.addEventListener('tag-removed', change(function (value) { removeTag(value.id); }));
          source.addEventListener('zone', change(function (value) { applyZone(value.zone); }));
          source.addEventListener('event', change(function (value) {
            events.push(value.event);
            if (events.length > 50) { events = events.slice(-50); }
            drawEvents();
          }));
          source.addEventListener('locator', change(function (value) { applyLocator(value.locator); }));
          source.addEventListener('agent', change(function (value) { applyAgent(value.id, value.online); }));
        })();
        """#
}
