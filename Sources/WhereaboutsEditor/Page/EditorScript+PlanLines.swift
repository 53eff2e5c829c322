extension EditorScript {
    /// An SVG plan's lines and shapes (snapping, candidates to accept), the planning view, and the start.
    static let planLines = #"""
        // MARK: an SVG plan's lines and closed shapes: snapping targets, and walls and obstacles to accept one by one

        const IDENTITY = [1, 0, 0, 1, 0, 0];

        function multiply(m, n) {
          return [m[0] * n[0] + m[2] * n[1], m[1] * n[0] + m[3] * n[1], m[0] * n[2] + m[2] * n[3], m[1] * n[2] + m[3] * n[3],
            m[0] * n[4] + m[2] * n[5] + m[4], m[1] * n[4] + m[3] * n[5] + m[5]];
        }

        function parseTransform(textValue) {
          let m = IDENTITY;
          const pattern = /(matrix|translate|scale|rotate)\s*\(([^)]*)\)/g;
          let match;
          while ((match = pattern.exec(textValue || ''))) {
            const a = match[2].split(/[\s,]+/).filter(Boolean).map(Number);
            let n = IDENTITY;
            if (match[1] === 'matrix' && a.length === 6) n = a;
            else if (match[1] === 'translate') n = [1, 0, 0, 1, a[0] || 0, a[1] || 0];
            else if (match[1] === 'scale') n = [a[0] || 1, 0, 0, a.length > 1 ? a[1] : a[0] || 1, 0, 0];
            else if (match[1] === 'rotate') {
              const r = (a[0] || 0) * Math.PI / 180, c = Math.cos(r), s = Math.sin(r);
              n = multiply(multiply([1, 0, 0, 1, a[1] || 0, a[2] || 0], [c, s, -s, c, 0, 0]), [1, 0, 0, 1, -(a[1] || 0), -(a[2] || 0)]);
            }
            m = multiply(m, n);
          }
          return m;
        }

        /// A path's subpaths of straight pieces (curves end one and start the next at their end point).
        function pathShapes(d) {
          const tokens = (d || '').match(/[MmLlHhVvZzCcSsQqTtAa]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g) || [];
          const shapes = [];
          let shape = null, x = 0, y = 0, command = '', i = 0;
          const counts = {C: 6, S: 4, Q: 4, T: 2, A: 7};
          const start = () => { shape = {closed: false, points: [[x, y]]}; shapes.push(shape); };
          while (i < tokens.length && shapes.length < 5000) {
            if (/[A-Za-z]/.test(tokens[i])) command = tokens[i++];
            const relative = command === command.toLowerCase();
            const upper = command.toUpperCase();
            const take = (n) => { const values = tokens.slice(i, i + n).map(Number); i += n; return values; };
            if (upper === 'Z') { if (shape) shape.closed = true; shape = null; continue; }
            if (upper === 'M' || upper === 'L') {
              const [a, b] = take(2);
              x = relative ? x + a : a; y = relative ? y + b : b;
              if (upper === 'M' || !shape) start(); else shape.points.push([x, y]);
              if (upper === 'M') command = relative ? 'l' : 'L';
            } else if (upper === 'H' || upper === 'V') {
              const [a] = take(1);
              if (upper === 'H') x = relative ? x + a : a; else y = relative ? y + a : a;
              if (!shape) start(); else shape.points.push([x, y]);
            } else if (counts[upper]) {
              const values = take(counts[upper]);
              x = relative ? x + values[values.length - 2] : values[values.length - 2];
              y = relative ? y + values[values.length - 1] : values[values.length - 1];
              start();
            } else {
              i += 1;
            }
            if (tokens.length && i >= tokens.length) break;
          }
          return shapes.filter((s) => s.points.length > 1 && s.points.every((p) => isFinite(p[0]) && isFinite(p[1])));
        }

        function elementShapes(node) {
          const n = (name) => Number(node.getAttribute(name) || 0);
          const points = () => (node.getAttribute('points') || '').trim().split(/[\s,]+/).map(Number).reduce((all, v, i, values) =>
            (i % 2 ? all : all.concat([[v, values[i + 1]]])), []).filter((p) => isFinite(p[0]) && isFinite(p[1]));
          switch (node.localName) {
          case 'line': return [{closed: false, points: [[n('x1'), n('y1')], [n('x2'), n('y2')]]}];
          case 'polyline': return [{closed: false, points: points()}];
          case 'polygon': return [{closed: true, points: points()}];
          case 'rect': return [{closed: true, points: [[n('x'), n('y')], [n('x') + n('width'), n('y')], [n('x') + n('width'), n('y') + n('height')], [n('x'), n('y') + n('height')]]}];
          case 'path': return pathShapes(node.getAttribute('d'));
          }
          return [];
        }

        /// Reads an SVG picture's straight lines and closed shapes, in the picture's pixels.
        function readSVGGeometry(source, record) {
          const svg = new DOMParser().parseFromString(source, 'image/svg+xml').documentElement;
          if (!svg || svg.localName !== 'svg') return;
          const box = (svg.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
          let root = IDENTITY;
          if (box.length === 4 && box[2] > 0 && box[3] > 0) root = [record.width / box[2], 0, 0, record.height / box[3], -box[0] * record.width / box[2], -box[1] * record.height / box[3]];
          const shapes = [];
          const skip = new Set(['defs', 'clipPath', 'mask', 'pattern', 'symbol', 'marker', 'text', 'style', 'metadata', 'title']);
          const walk = (node, matrix) => {
            for (const child of node.children) {
              if (skip.has(child.localName) || shapes.length > 5000) continue;
              const m = multiply(matrix, parseTransform(child.getAttribute('transform')));
              for (const shape of elementShapes(child)) {
                shapes.push({closed: shape.closed, points: shape.points.map(([x, y]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]])});
              }
              walk(child, m);
            }
          };
          walk(svg, root);
          record.shapes = shapes;
        }

        let geometryCache = {key: '', value: {vertices: [], segments: [], shapes: []}};

        /// The current floor's plan picture's vertices, segments and shapes, on the plan.
        function planGeometry() {
          const current = currentUnderlay();
          if (!current || !current.image || !current.image.shapes.length) return {vertices: [], segments: [], shapes: []};
          const key = JSON.stringify(current.underlay) + current.image.url;
          if (geometryCache.key === key) return geometryCache.value;
          const shapes = current.image.shapes.map((shape) => ({closed: shape.closed, points: shape.points.map(([u, v]) => imageToPlan(current.underlay, u, v))}));
          const vertices = [], segments = [], seen = new Set();
          for (const shape of shapes) {
            shape.points.forEach((p, i) => {
              const id = p[0].toFixed(4) + ',' + p[1].toFixed(4);
              if (!seen.has(id)) { seen.add(id); vertices.push(p); }
              const next = shape.points[i + 1] || (shape.closed ? shape.points[0] : null);
              if (next) segments.push([p, next]);
            });
          }
          geometryCache = {key, value: {vertices, segments, shapes}};
          return geometryCache.value;
        }

        function refreshCandidates() {
          if (E.tool !== 'candidates' || !E.doc) { E.candidates = []; return; }
          const key = (points) => points.map((p) => round3(p[0]) + ',' + round3(p[1])).sort().join(' ');
          const taken = new Set();
          for (const wall of list('walls')) if (onFloor(wall) && isPoint(wall.from) && isPoint(wall.to)) taken.add(key([wall.from, wall.to]));
          // What the map has already (the outline, zones, obstacles, walls) is not offered again.
          for (const kind of ['obstacles', 'zones']) {
            for (const o of list(kind)) if (onFloor(o) && Array.isArray(o.polygon)) taken.add(key(o.polygon.filter(isPoint)));
          }
          const floor = currentFloor();
          if (floor && Array.isArray(floor.outline)) taken.add(key(floor.outline.filter(isPoint)));
          const found = [];
          for (const shape of planGeometry().shapes) {
            const points = shape.points.map((p) => [round3(p[0]), round3(p[1])]);
            if (shape.closed && points.length >= 3) {
              // Marks and symbols (an agent's triangle, a door's swing) are not obstacles: less than half a metre square.
              if (Math.abs(area(points)) >= 0.25 && !taken.has(key(points))) { taken.add(key(points)); found.push({closed: true, points}); }
            } else {
              for (let i = 0; i + 1 < points.length; i++) {
                const pair = [points[i], points[i + 1]];
                if (distance(pair[0], pair[1]) >= 0.2 && !taken.has(key(pair))) { taken.add(key(pair)); found.push({closed: false, points: pair}); }
              }
            }
            if (found.length >= 2000) break;
          }
          E.candidates = found;
          E.candidateIndex = Math.min(E.candidateIndex, Math.max(0, found.length - 1));
          renderCandidatePanel();
        }

        function area(points) {
          return points.reduce((sum, p, i) => { const q = points[(i + 1) % points.length]; return sum + p[0] * q[1] - q[0] * p[1]; }, 0) / 2;
        }

        function drawCandidates() {
          return E.candidates.map((c, i) => '<' + (c.closed ? 'polygon' : 'polyline') + ' class="candidate' + (i === E.candidateIndex ? ' current' : '') +
            '" data-candidate="' + i + '" points="' + pointsAttribute(c.points) + '"/>').join('');
        }

        function renderCandidatePanel() {
          const c = E.candidates[E.candidateIndex];
          $('#candidate-state').textContent = !E.candidates.length ? 'No lines left to offer (an SVG plan picture on this floor has them).' :
            'Line ' + (E.candidateIndex + 1) + ' of ' + E.candidates.length + ': ' + (c.closed ? 'a closed shape of ' + c.points.length + ' corners' : 'from (' + c.points[0] + ') to (' + c.points[1] + ')');
          $('#candidate-accept-wall').disabled = !c;
          $('#candidate-accept-obstacle').disabled = !c || !c.closed;
          $('#candidate-skip').disabled = !c;
        }

        function acceptCandidate(asObstacle) {
          const c = E.candidates[E.candidateIndex];
          if (!c) return;
          if (asObstacle === true || (asObstacle === undefined && c.closed)) {
            if (!c.closed) return;
            commit(() => { ensureList('obstacles').push({floor: E.floor, polygon: c.points}); });
            return;
          }
          const settings = wallSettings();
          commit(() => {
            const pieces = c.closed ? c.points.map((p, i) => [p, c.points[(i + 1) % c.points.length]]) : [c.points];
            for (const [from, to] of pieces) {
              const wall = {floor: E.floor, from, to, loss: settings.loss};
              if (settings.blocks) wall.blocks_walking = true;
              ensureList('walls').push(wall);
            }
          });
        }

        function skipCandidate() {
          if (!E.candidates.length) return;
          E.candidateIndex = (E.candidateIndex + 1) % E.candidates.length;
          renderCandidatePanel();
          render();
        }

        function pickCandidate(raw) {
          let best = -1, bestDistance = SNAP_PIXELS / E.view.k;
          E.candidates.forEach((c, i) => {
            const pieces = c.points.map((p, j) => [p, c.points[j + 1] || (c.closed ? c.points[0] : p)]);
            for (const [a, b] of pieces) {
              const d = distance(closestOnSegment(raw, a, b), raw);
              if (d < bestDistance) { best = i; bestDistance = d; }
            }
          });
          if (best < 0) return;
          if (best === E.candidateIndex) acceptCandidate();
          else { E.candidateIndex = best; renderCandidatePanel(); render(); }
        }
        // MARK: the planning view: the accuracy to expect per cell, as the check's `plan` gives it (AccuracyPlanJSON)

        /// The plan of the current floor: {origin: [x, y] (the raster's corner with the smallest x and y), cell_size,
        /// columns, rows, accuracy: metres per cell, row by row from the smallest y, null where nobody stands or nothing is
        /// heard; zones: [{minor, accuracy, confused_share, confused_with}]}.
        function floorPlan() {
          if (!Array.isArray(E.plan)) return null;
          const plan = E.plan.find((p) => p && p.floor === E.floor);
          if (!plan || !isPoint(plan.origin) || !(plan.cell_size > 0) || !Array.isArray(plan.accuracy)) return null;
          return plan.accuracy.length === plan.columns * plan.rows ? plan : null;
        }

        /// Green at a metre or better to red at five metres or worse, in ten steps.
        function accuracyColour(metres) {
          const t = Math.max(0, Math.min(1, (metres - 1) / 4));
          return 'hsl(' + Math.round(120 * (1 - Math.round(t * 9) / 9)) + ', 70%, 50%)';
        }

        /// Whether the plan is shown: asked for, and not in survey mode (which shows what was measured instead).
        const planShown = () => E.showPlan && E.tool !== 'survey';

        function drawPlanning() {
          const plan = planShown() ? floorPlan() : null;
          if (!plan) return '';
          const size = plan.cell_size * E.view.k;
          let out = '<g id="planning-layer" opacity="0.45">';
          for (let row = 0; row < plan.rows; row++) {
            // A run of cells of one colour is one rectangle: fewer elements to redraw while agents are dragged.
            let start = 0;
            for (let column = 1; column <= plan.columns; column++) {
              const here = plan.accuracy[row * plan.columns + start];
              const next = column < plan.columns ? plan.accuracy[row * plan.columns + column] : undefined;
              const colour = (v) => (isNumber(v) ? accuracyColour(v) : null);
              if (column < plan.columns && colour(next) === colour(here)) continue;
              if (colour(here)) {
                out += '<rect class="plan-cell" x="' + number(screenX(plan.origin[0] + start * plan.cell_size)) + '" y="' +
                  number(screenY(plan.origin[1] + (row + 1) * plan.cell_size)) + '" width="' + number((column - start) * size) +
                  '" height="' + number(size) + '" fill="' + colour(here) + '"/>';
              }
              start = column;
            }
          }
          return out + '</g>';
        }

        /// The expected accuracy at a point, or null.
        function planAt(p) {
          const plan = planShown() ? floorPlan() : null;
          if (!plan) return null;
          const column = Math.floor((p[0] - plan.origin[0]) / plan.cell_size), row = Math.floor((p[1] - plan.origin[1]) / plan.cell_size);
          if (column < 0 || row < 0 || column >= plan.columns || row >= plan.rows) return null;
          const value = plan.accuracy[row * plan.columns + column];
          return isNumber(value) ? value : null;
        }

        /// A zone's expected accuracy and confusion, for its label.
        function zonePlanText(zone) {
          const plan = planShown() ? floorPlan() : null;
          const entry = plan && Array.isArray(plan.zones) ? plan.zones.find((z) => z && z.minor === zone.minor) : null;
          if (!entry || !isNumber(entry.accuracy)) return '';
          const share = isNumber(entry.confused_share) && entry.confused_share > 0 ? ', ' + Math.round(entry.confused_share * 100) + ' % confusable' : '';
          return ' ±' + entry.accuracy.toFixed(1) + ' m' + share;
        }

        function updatePlanToggle() {
          $('#plan-toggle').hidden = !Array.isArray(E.plan) || !E.plan.length;
        }
        // MARK: start

        function start() {
          const svg = $('#plan');
          svg.addEventListener('pointerdown', pointerDown);
          svg.addEventListener('pointermove', pointerMove);
          svg.addEventListener('pointerup', pointerUp);
          svg.addEventListener('pointercancel', pointerUp);
          svg.addEventListener('pointerleave', () => { if (!E.drag) { E.hover = null; render(); } });
          svg.addEventListener('dblclick', () => { if (['outline', 'zone', 'obstacle'].includes(E.tool)) finishShape(); });
          svg.addEventListener('wheel', wheel, {passive: false});
          svg.addEventListener('contextmenu', (event) => event.preventDefault());
          document.addEventListener('keydown', keyDown);
          document.addEventListener('keyup', keyUp);
          window.addEventListener('resize', render);
          $('#toolbar').addEventListener('click', (event) => {
            const button = event.target.closest('[data-tool]');
            if (button) setTool(button.dataset.tool);
          });
          $('#floor-tabs').addEventListener('click', (event) => {
            const button = event.target.closest('[data-floor]');
            if (button) { E.selection = null; showFloor(Number(button.dataset.floor)); }
          });
          $('#add-floor').addEventListener('click', addFloor);
          $('#undo').addEventListener('click', undo);
          $('#redo').addEventListener('click', redo);
          $('#save').addEventListener('click', save);
          $('#help-button').addEventListener('click', () => { $('#help').hidden = !$('#help').hidden; });
          $('#help-close').addEventListener('click', () => { $('#help').hidden = true; });
          $('#panel').addEventListener('change', panelChange);
          $('#panel').addEventListener('click', panelClick);
          // Enter takes a field's value at once (Firefox fires no change for a field blurred in its own keydown); the change
          // event that may follow finds nothing new to commit.
          $('#panel').addEventListener('keydown', (event) => {
            if (event.key !== 'Enter' || !event.target.matches('input')) return;
            const input = event.target;
            panelChange({target: input});
            if (input.isConnected) input.blur();
          });
          $('#problems').addEventListener('click', (event) => {
            const item = event.target.closest('[data-problem]');
            if (item) showProblem(Number(item.dataset.problem));
          });
          $('#wall-material').addEventListener('change', materialChange);
          $('#wall-loss').addEventListener('input', lossInput);
          $('#snap-grid').addEventListener('change', (event) => { E.snapGrid = event.target.checked; });
          $('#snap-plan').addEventListener('change', (event) => { E.snapPlan = event.target.checked; });
          $('#underlay-file').addEventListener('change', (event) => { uploadUnderlay(event.target.files[0]); event.target.value = ''; });
          for (const input of document.querySelectorAll('[data-underlay]')) input.addEventListener('change', underlayFieldChange);
          $('#show-plan').addEventListener('change', (event) => { E.showPlan = event.target.checked; render(); });
          $('#underlay-opacity').addEventListener('input', (event) => { E.opacity = Number(event.target.value); render(); });
          $('#remove-underlay').addEventListener('click', () => commit(() => { delete currentFloor().underlay; }));
          $('#calibrate-form').addEventListener('submit', applyCalibration);
          $('#candidate-accept-wall').addEventListener('click', () => acceptCandidate(false));
          $('#candidate-accept-obstacle').addEventListener('click', () => acceptCandidate(true));
          $('#candidate-skip').addEventListener('click', skipCandidate);
          startSurvey();
          setTool('select');
          load();
        }

        // For browser tests and the curious: read the state, place the view, and find where plan points are drawn.
        window.editor = {
          document: () => JSON.parse(JSON.stringify(E.doc)),
          text,
          state: () => ({tool: E.tool, floor: E.floor, selection: E.selection && pathOf(E.selection), problems: E.problems.slice(), valid: E.valid,
            checked: E.checkedSequence === E.checkSequence, undo: E.undo.length, redo: E.redo.length, candidates: E.candidates.length,
            view: Object.assign({}, E.view), drafting: E.draft.length, saved: E.saveState, planVertices: planGeometry().vertices.length}),
          setView: (k, tx, ty) => { E.view = {k, tx, ty}; render(); },
          survey: () => JSON.parse(JSON.stringify({status: S.status, report: S.report, view: S.view, message: S.message})),
          screenOf: (x, y) => { const box = $('#plan').getBoundingClientRect(); return [box.left + screenX(x), box.top + screenY(y)]; },
          imageToScreen: (u, v) => {
            const current = currentUnderlay();
            return current ? window.editor.screenOf(...imageToPlan(current.underlay, u, v)) : null;
          },
        };

        if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
        else start();
        })();

        """#
}
