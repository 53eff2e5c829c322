/// The editor's script, one file in the browser: a plain script (no modules, no libraries) kept in a few
/// Swift files by concern, joined here in order.
enum EditorScript {
    static let text = [core, drawing, tools, panels, survey, planLines].joined(separator: "\n")

    /// The page's state, the document's changes with undo and redo, and the server's checks and saving.
    static let core = #"""
        // The map editor. It edits the map file's JSON document itself (so unknown keys and untouched parts survive),
        // posts the whole text to /edit/api/check as you draw and to /edit/api/save, and draws the current floor in SVG
        // with plan metres mapped to screen pixels by `E.view` (x right, y up). window.editor is for browser tests.
        (function () {
        'use strict';

        const GRID = 0.05;          // metres: the snapping grid
        const SNAP_PIXELS = 8;      // how near (screen pixels) a vertex or line must be to be snapped to
        const WALL_PRESETS = {drywall: 3, brick: 6, concrete: 12, glass: 2};
        const $ = (selector) => document.querySelector(selector);
        const token = new URLSearchParams(location.search).get('token') || '';

        const E = {
          doc: null, revision: '', writable: false, reload: '', floor: null,
          tool: 'select', selection: null, draft: [], measure: [], hover: null,
          view: {k: 20, tx: 40, ty: 500}, undo: [], redo: [],
          problems: [], checkSequence: 0, checkedSequence: -1, valid: false, plan: null,
          images: {}, candidates: [], candidateIndex: 0, drag: null, spaceHeld: false, altHeld: false,
          snapGrid: true, snapPlan: true, opacity: 0.5, saveState: '', showPlan: true,
        };

        // MARK: numbers and geometry

        const round3 = (v) => Math.round(v * 1000) / 1000;
        const isNumber = (v) => typeof v === 'number' && isFinite(v);
        const isPoint = (p) => Array.isArray(p) && p.length === 2 && isNumber(p[0]) && isNumber(p[1]);
        const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);
        const samePoint = (a, b) => distance(a, b) < 1e-6;

        function closestOnSegment(p, a, b) {
          const dx = b[0] - a[0], dy = b[1] - a[1];
          const length2 = dx * dx + dy * dy;
          if (length2 === 0) return a.slice();
          const t = Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2));
          return [a[0] + t * dx, a[1] + t * dy];
        }

        function centroid(points) {
          const valid = (points || []).filter(isPoint);
          if (!valid.length) return null;
          return [valid.reduce((s, p) => s + p[0], 0) / valid.length, valid.reduce((s, p) => s + p[1], 0) / valid.length];
        }

        function bounds(points) {
          const valid = (points || []).filter(isPoint);
          if (!valid.length) return null;
          const xs = valid.map((p) => p[0]), ys = valid.map((p) => p[1]);
          return {minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys)};
        }

        function insidePolygon(p, polygon) {
          let inside = false;
          for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
            const a = polygon[i], b = polygon[j];
            if ((a[1] > p[1]) !== (b[1] > p[1]) && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) {
              inside = !inside;
            }
          }
          return inside;
        }

        function escapeText(text) {
          return String(text).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]);
        }

        // MARK: the document

        const list = (key) => (Array.isArray(E.doc[key]) ? E.doc[key] : []);
        const floors = () => list('floors').filter((f) => f && typeof f === 'object');
        const currentFloor = () => floors().find((f) => f.major === E.floor) || null;
        const floorIndex = () => list('floors').indexOf(currentFloor());
        const onFloor = (element) => element && typeof element === 'object' && element.floor === E.floor;
        const stairsOnFloor = (s) => s && Array.isArray(s.floors) && s.floors.includes(E.floor);

        function ensureList(key) {
          if (!Array.isArray(E.doc[key])) E.doc[key] = [];
          return E.doc[key];
        }

        /// The element a selection names, or null when it is gone.
        function selected(selection = E.selection) {
          if (!selection) return null;
          const element = list(selection.kind)[selection.index];
          if (!element || typeof element !== 'object') return null;
          if (selection.door === undefined) return element;
          return Array.isArray(element.doors) ? element.doors[selection.door] || null : null;
        }

        function pathOf(selection) {
          const base = '$.' + selection.kind + '[' + selection.index + ']';
          return selection.door === undefined ? base : base + '.doors[' + selection.door + ']';
        }

        function lowestFree(used, from) {
          let value = from;
          while (used.has(value)) value += 1;
          return value;
        }

        function nextMinor() {
          return lowestFree(new Set(list('zones').filter(onFloor).map((z) => z.minor)), 1);
        }

        function nextAgentId() {
          const used = new Set(list('agents').map((a) => a && a.id));
          let n = 1;
          while (used.has('agent-' + n)) n += 1;
          return 'agent-' + n;
        }

        function text() {
          return JSON.stringify(E.doc, null, 2) + '\n';
        }

        // MARK: changes, undo and redo

        /// A state to go back to: the document's text and what was selected (so that redo selects what the change made).
        const snapshot = (doc = JSON.stringify(E.doc), selection = E.selection) => ({doc, selection: selection && Object.assign({}, selection)});

        /// Every change to the document goes through here: one undo step, then a redraw and a check.
        function commit(change) {
          const before = snapshot();
          change();
          if (JSON.stringify(E.doc) === before.doc) return;
          record(before);
        }

        function record(before) {
          E.undo.push(before);
          if (E.undo.length > 300) E.undo.shift();
          E.redo = [];
          changed();
        }

        function restore(from, to) {
          if (!from.length) return;
          to.push(snapshot());
          const state = from.pop();
          E.doc = JSON.parse(state.doc);
          E.selection = state.selection;
          if (!selected()) E.selection = null;
          if (!currentFloor() && floors().length) E.floor = floors()[0].major;
          E.draft = [];
          changed();
        }

        const undo = () => restore(E.undo, E.redo);
        const redo = () => restore(E.redo, E.undo);

        function changed() {
          E.saveState = '';
          refreshCandidates();
          render();
          renderPanel();
          renderTabs();
          scheduleCheck();
        }

        // MARK: talking to the server

        function request(method, url, body, type) {
          const headers = {};
          if (token) headers['X-Whereabouts-Token'] = token;
          if (type) headers['Content-Type'] = type;
          return fetch(url, {method, headers, body, cache: 'no-store', credentials: 'same-origin'});
        }

        let checkTimer = null;
        function scheduleCheck() {
          E.checkSequence += 1;
          document.body.dataset.check = 'pending';
          $('#check-state').textContent = 'checking…';
          updateSave();
          clearTimeout(checkTimer);
          checkTimer = setTimeout(runCheck, 250);
        }

        async function runCheck() {
          const sequence = E.checkSequence;
          try {
            const response = await request('POST', '/edit/api/check', text(), 'application/json');
            const answer = await response.json();
            if (sequence !== E.checkSequence) return;
            E.problems = Array.isArray(answer.problems) ? answer.problems : [];
            E.valid = answer.ok === true;
            E.plan = answer.plan || null;
            E.checkedSequence = sequence;
          } catch (error) {
            if (sequence !== E.checkSequence) return;
            E.problems = [{path: '$', message: 'the check failed: ' + error}];
            E.valid = false;
          }
          document.body.dataset.check = E.valid ? 'ok' : 'invalid';
          $('#check-state').textContent = E.valid ? 'no problems' : E.problems.length + ' problem' + (E.problems.length === 1 ? '' : 's');
          renderProblems();
          updatePlanToggle();
          render();
          renderTabs();
          updateSave();
        }

        function updateSave() {
          const ready = E.valid && E.checkedSequence === E.checkSequence && E.writable;
          $('#save').disabled = !ready;
          $('#undo').disabled = !E.undo.length;
          $('#redo').disabled = !E.redo.length;
        }

        async function save() {
          if ($('#save').disabled) return;
          const result = $('#save-result');
          result.className = '';
          result.textContent = 'saving…';
          try {
            const response = await request('POST', '/edit/api/save?revision=' + encodeURIComponent(E.revision), text(), 'application/json');
            const answer = await response.json();
            if (response.ok && answer.saved) {
              E.revision = answer.revision;
              E.saveState = answer.unchanged ? 'unchanged' : 'saved';
              result.innerHTML = (answer.unchanged ? 'Nothing changed in the file.' : 'Saved' + (answer.backup ? ' (the previous file is kept as .bak)' : '') + '.') +
                ' To make the locator take it:<code>' + escapeText(answer.reload || E.reload) + '</code>';
              document.body.dataset.saved = String(Number(document.body.dataset.saved || 0) + 1);
            } else {
              if (Array.isArray(answer.problems)) {
                E.problems = answer.problems;
                renderProblems();
                render();
              }
              result.className = 'failed';
              result.textContent = 'Not saved: ' + (answer.error || answer.problems.length + ' problems');
            }
          } catch (error) {
            result.className = 'failed';
            result.textContent = 'Not saved: ' + error;
          }
        }

        async function load() {
          const response = await fetch('/edit/api/map', {cache: 'no-store', headers: token ? {'X-Whereabouts-Token': token} : {}});
          const answer = await response.json();
          E.revision = answer.revision;
          E.writable = answer.writable === true;
          E.reload = answer.reload || '';
          try {
            E.doc = JSON.parse(answer.text);
          } catch (error) {
            document.body.dataset.state = 'broken';
            $('#panel').innerHTML = '<p class="banner">The map file is not JSON the editor can read: ' + escapeText(error) + '</p>';
            return;
          }
          if (!E.doc || typeof E.doc !== 'object' || Array.isArray(E.doc)) E.doc = {floors: [], agents: []};
          if (!E.writable) {
            $('#save-result').innerHTML = '<span class="banner">Read only: open the address printed when the editor started (it carries the token) to save.</span>';
          }
          const site = E.doc.site && typeof E.doc.site.name === 'string' ? E.doc.site.name : 'Map editor';
          $('#site-name').textContent = site;
          document.title = site + ' · Whereabouts editor';
          const first = floors().slice().sort((a, b) => a.major - b.major)[0];
          E.floor = first ? first.major : null;
          for (const floor of floors()) if (floor.underlay && typeof floor.underlay.file === 'string') loadImage(floor.underlay.file);
          document.body.dataset.state = 'ready';
          fit();
          changed();
        }

        """#
}
