extension EditorScript {
    /// The view (pan, zoom, plan metres to pixels), the floor drawn as SVG, and problems at their places.
    static let drawing = #"""
        // MARK: the view: plan metres to screen pixels

        const screenX = (x) => E.view.tx + E.view.k * x;
        const screenY = (y) => E.view.ty - E.view.k * y;
        const screen = (p) => [screenX(p[0]), screenY(p[1])];
        const number = (v) => (Math.round(v * 100) / 100).toString();

        function planPoint(event) {
          const box = $('#plan').getBoundingClientRect();
          return [(event.clientX - box.left - E.view.tx) / E.view.k, (E.view.ty - (event.clientY - box.top)) / E.view.k];
        }

        function fit() {
          const floor = currentFloor();
          const box = $('#plan').getBoundingClientRect();
          const b = floor && bounds(floor.outline);
          if (!b || box.width < 10) return;
          const k = Math.max(2, Math.min(2000, 0.88 * Math.min(box.width / Math.max(b.maxX - b.minX, 0.5), box.height / Math.max(b.maxY - b.minY, 0.5))));
          E.view = {k, tx: box.width / 2 - k * (b.minX + b.maxX) / 2, ty: box.height / 2 + k * (b.minY + b.maxY) / 2};
          render();
        }

        function zoom(factor, sx, sy) {
          const k = Math.max(2, Math.min(2000, E.view.k * factor));
          const f = k / E.view.k;
          E.view = {k, tx: sx - (sx - E.view.tx) * f, ty: sy - (sy - E.view.ty) * f};
          render();
        }

        function pointsAttribute(points) {
          return points.filter(isPoint).map((p) => number(screenX(p[0])) + ',' + number(screenY(p[1]))).join(' ');
        }

        // MARK: drawing the floor

        function render() {
          if (!E.doc) return;
          const floor = currentFloor();
          const problemPaths = new Set(E.problems.map((p) => elementOfProblem(p.path)).filter(Boolean));
          const mark = (path, extra) => {
            const classes = [extra];
            if (E.selection && pathOf(E.selection) === path) classes.push('selected');
            if (problemPaths.has(path)) classes.push('has-problem');
            return ' class="' + classes.join(' ') + '" data-path="' + path + '"';
          };
          let out = gridLines();
          out += underlayImage(floor);
          floors().forEach((other) => {
            if (other !== floor && Array.isArray(other.outline)) out += '<polygon class="other-outline" points="' + pointsAttribute(other.outline) + '"/>';
          });
          if (floor && Array.isArray(floor.outline)) {
            out += '<polygon' + mark('$.floors[' + floorIndex() + '].outline', 'outline') + ' points="' + pointsAttribute(floor.outline) + '"/>';
          }
          out += drawPlanning() + drawZonesAndObstacles(mark) + drawWalls(mark) + drawPoints(mark) + drawCandidates();
          out += drawSurvey() + drawSelectionHandles() + drawDraft() + drawProblemMarkers();
          $('#plan').innerHTML = out;
        }

        function gridLines() {
          const box = $('#plan').getBoundingClientRect();
          const step = [0.1, 0.5, 1, 5, 10, 50, 100].find((s) => s * E.view.k >= 24) || 100;
          let out = '';
          const x0 = Math.floor(-E.view.tx / E.view.k / step) * step, x1 = (box.width - E.view.tx) / E.view.k;
          const y0 = Math.floor((E.view.ty - box.height) / E.view.k / step) * step, y1 = E.view.ty / E.view.k;
          for (let x = x0; x <= x1 && out.length < 40000; x += step) {
            const sx = number(screenX(x));
            out += '<line class="' + (Math.abs(x) < 1e-9 ? 'axis-line' : 'grid-line') + '" x1="' + sx + '" y1="0" x2="' + sx + '" y2="' + number(box.height) + '"/>';
          }
          for (let y = y0; y <= y1 && out.length < 80000; y += step) {
            const sy = number(screenY(y));
            out += '<line class="' + (Math.abs(y) < 1e-9 ? 'axis-line' : 'grid-line') + '" x1="0" y1="' + sy + '" x2="' + number(box.width) + '" y2="' + sy + '"/>';
          }
          return out;
        }

        function drawZonesAndObstacles(mark) {
          let out = '';
          list('zones').forEach((zone, index) => {
            if (!onFloor(zone) || !Array.isArray(zone.polygon)) return;
            const path = '$.zones[' + index + ']';
            out += '<polygon' + mark(path, 'zone') + ' data-minor="' + escapeText(zone.minor) + '" points="' + pointsAttribute(zone.polygon) + '"/>';
            const centre = centroid(zone.polygon);
            if (centre) {
              out += '<text class="zone-label" x="' + number(screenX(centre[0])) + '" y="' + number(screenY(centre[1])) + '">' +
                escapeText(zone.name === undefined ? '' : zone.name) + ' (' + escapeText(zone.minor) + ')' + escapeText(zonePlanText(zone)) + '</text>';
            }
          });
          list('obstacles').forEach((obstacle, index) => {
            if (!onFloor(obstacle) || !Array.isArray(obstacle.polygon)) return;
            out += '<polygon' + mark('$.obstacles[' + index + ']', 'obstacle') + ' points="' + pointsAttribute(obstacle.polygon) + '"/>';
          });
          return out;
        }

        function drawWalls(mark) {
          let out = '';
          list('walls').forEach((wall, index) => {
            if (!onFloor(wall) || !isPoint(wall.from) || !isPoint(wall.to)) return;
            const path = '$.walls[' + index + ']';
            const a = screen(wall.from), b = screen(wall.to);
            const coordinates = ' x1="' + number(a[0]) + '" y1="' + number(a[1]) + '" x2="' + number(b[0]) + '" y2="' + number(b[1]) + '"';
            const width = wall.blocks_walking === true ? 4 : 1 + (isNumber(wall.loss) ? Math.min(wall.loss, 30) / 3 : 1);
            out += '<line' + mark(path, 'wall' + (wall.blocks_walking === true ? ' blocking' : '')) + coordinates + ' stroke-width="' + number(width) + '"/>';
            out += '<line class="wall-hit" data-path="' + path + '"' + coordinates + '/>';
            (Array.isArray(wall.doors) ? wall.doors : []).forEach((door, doorIndex) => {
              if (!door || !isPoint(door.at)) return;
              const length = distance(wall.from, wall.to) || 1;
              const half = (isNumber(door.width) ? door.width : 0.9) / 2 / length;
              const ux = (wall.to[0] - wall.from[0]) * half, uy = (wall.to[1] - wall.from[1]) * half;
              const p = screen([door.at[0] - ux, door.at[1] - uy]), q = screen([door.at[0] + ux, door.at[1] + uy]);
              out += '<line' + mark(path + '.doors[' + doorIndex + ']', 'door') + ' x1="' + number(p[0]) + '" y1="' + number(p[1]) +
                '" x2="' + number(q[0]) + '" y2="' + number(q[1]) + '"/>';
            });
          });
          return out;
        }

        function drawPoints(mark) {
          let out = '';
          list('stairs').forEach((stairs, index) => {
            if (!stairsOnFloor(stairs) || !isNumber(stairs.x) || !isNumber(stairs.y)) return;
            const size = Math.max(8, 0.8 * E.view.k);
            out += '<rect' + mark('$.stairs[' + index + ']', 'stairs') + ' x="' + number(screenX(stairs.x) - size / 2) + '" y="' +
              number(screenY(stairs.y) - size / 2) + '" width="' + number(size) + '" height="' + number(size) + '"/>';
          });
          list('agents').forEach((agent, index) => {
            if (!onFloor(agent) || !isNumber(agent.x) || !isNumber(agent.y)) return;
            const x = screenX(agent.x), y = screenY(agent.y);
            out += '<circle' + mark('$.agents[' + index + ']', 'agent') + ' data-agent="' + escapeText(agent.id) + '" cx="' + number(x) +
              '" cy="' + number(y) + '" r="7"/>';
            out += '<text class="agent-label" x="' + number(x + 10) + '" y="' + number(y - 8) + '">' + escapeText(agent.id) + '</text>';
          });
          return out;
        }

        /// The vertices of the selection that can be dragged, each with its place in the element.
        function handles() {
          const element = selected();
          if (!element) {
            // Nothing selected: the floor's outline, whose corners the select tool drags.
            const floor = currentFloor();
            if (E.tool !== 'select' || !floor || !Array.isArray(floor.outline)) return [];
            return floor.outline.map((p, i) => ({p, key: 'outline', i, floor: true}));
          }
          if (E.selection.door !== undefined) return [];
          const kind = E.selection.kind;
          if (kind === 'floors' && Array.isArray(element.outline)) return element.outline.map((p, i) => ({p, key: 'outline', i}));
          if ((kind === 'zones' || kind === 'obstacles') && Array.isArray(element.polygon)) return element.polygon.map((p, i) => ({p, key: 'polygon', i}));
          if (kind === 'walls') return [{p: element.from, key: 'from'}, {p: element.to, key: 'to'}];
          return [];
        }

        function drawSelectionHandles() {
          return handles().filter((h) => isPoint(h.p)).map((h, n) => '<circle class="handle" data-handle="' + n + '" cx="' +
            number(screenX(h.p[0])) + '" cy="' + number(screenY(h.p[1])) + '" r="5"/>').join('');
        }

        function drawDraft() {
          let out = '';
          const points = E.draft.concat(E.hover && E.draft.length ? [E.hover.p] : []);
          if (points.length > 1) {
            const closed = ['outline', 'zone', 'obstacle'].includes(E.tool);
            out += '<' + (closed ? 'polygon' : 'polyline') + ' class="draft" points="' + pointsAttribute(points) + '"/>';
          }
          for (const p of E.draft) out += '<circle class="draft-point" cx="' + number(screenX(p[0])) + '" cy="' + number(screenY(p[1])) + '" r="4"/>';
          if (E.measure.length) {
            const points = E.measure.concat(E.hover && E.measure.length < 2 ? [E.hover.p] : []);
            out += '<polyline class="measure" points="' + pointsAttribute(points) + '"/>';
            for (const p of E.measure) out += '<circle class="draft-point" cx="' + number(screenX(p[0])) + '" cy="' + number(screenY(p[1])) + '" r="4"/>';
          }
          if (E.hover && E.hover.kind !== 'free') {
            const s = screen(E.hover.p);
            out += '<circle class="snap ' + E.hover.kind + '" cx="' + number(s[0]) + '" cy="' + number(s[1]) + '" r="' + (E.hover.kind === 'grid' ? 3 : 6) + '"/>';
          }
          return out;
        }

        // MARK: floors

        function renderTabs() {
          const counts = {};
          for (const problem of E.problems) {
            const place = locate(problem.path);
            if (place && place.floor !== null) counts[place.floor] = (counts[place.floor] || 0) + 1;
          }
          $('#floor-tabs').innerHTML = floors().slice().sort((a, b) => a.major - b.major).map((floor) =>
            '<button type="button" data-floor="' + escapeText(floor.major) + '" aria-pressed="' + (floor.major === E.floor) + '">' +
            escapeText(floor.name === undefined ? 'Floor ' + floor.major : floor.name) +
            (counts[floor.major] ? '<span class="count">' + counts[floor.major] + '</span>' : '') + '</button>').join('');
          updateSave();
        }

        function showFloor(major) {
          if (!floors().some((f) => f.major === major)) return;
          E.floor = major;
          E.draft = [];
          E.measure = [];
          if (E.selection && E.selection.kind !== 'stairs' && !onFloor(selected()) && E.selection.kind !== 'floors') E.selection = null;
          refreshCandidates();
          renderTabs();
          renderPanel();
          fit();
        }

        function stepFloor(direction) {
          const majors = floors().map((f) => f.major).sort((a, b) => a - b);
          const next = majors[majors.indexOf(E.floor) + direction];
          if (next !== undefined) showFloor(next);
        }
        // MARK: problems at their places

        /// "$.walls[3].doors[0].at" -> ['walls', 3, 'doors', 0, 'at']; null when it is not such a path.
        function parsePath(path) {
          if (typeof path !== 'string' || path[0] !== '$') return null;
          const tokens = [];
          const pattern = /\.([^.[\]]+)|\[(\d+)\]/y;
          pattern.lastIndex = 1;
          while (pattern.lastIndex < path.length) {
            const match = pattern.exec(path);
            if (!match) break;
            tokens.push(match[1] !== undefined ? match[1] : Number(match[2]));
          }
          return tokens;
        }

        /// The drawn element a problem's path is about ("$.zones[3]", "$.walls[2].doors[0]", "$.floors[0].outline"), or null.
        function elementOfProblem(path) {
          const t = parsePath(path);
          if (!t || t.length < 2 || typeof t[1] !== 'number') return null;
          const base = '$.' + t[0] + '[' + t[1] + ']';
          if (t[0] === 'floors') return t[2] === 'outline' ? base + '.outline' : null;
          if (t[0] === 'walls' && t[2] === 'doors' && typeof t[3] === 'number') return base + '.doors[' + t[3] + ']';
          return ['zones', 'obstacles', 'walls', 'agents', 'stairs'].includes(t[0]) ? base : null;
        }

        /// Where a problem is: its floor and a point on the plan (a vertex, a wall's end, a door, an agent, a shape's
        /// middle), or null for a problem of the document as a whole (the site, the model, tags).
        function locate(path) {
          const t = parsePath(path);
          if (!t || t.length < 2 || typeof t[1] !== 'number') return null;
          const element = list(t[0])[t[1]];
          if (!element || typeof element !== 'object') return null;
          const vertex = (points, i) => (Array.isArray(points) && typeof i === 'number' && isPoint(points[i]) ? points[i] : centroid(points));
          let floor = isNumber(element.floor) ? element.floor : null;
          let p = null;
          switch (t[0]) {
          case 'floors':
            floor = isNumber(element.major) ? element.major : null;
            if (t[2] === 'underlay' && element.underlay && isPoint(element.underlay.origin)) p = element.underlay.origin;
            else p = vertex(element.outline, t[2] === 'outline' ? t[3] : undefined);
            break;
          case 'zones': case 'obstacles':
            p = vertex(element.polygon, t[2] === 'polygon' ? t[3] : undefined);
            break;
          case 'walls': {
            const ends = [element.from, element.to].filter(isPoint);
            const door = t[2] === 'doors' && Array.isArray(element.doors) ? element.doors[t[3]] : null;
            if (door && isPoint(door.at)) p = door.at;
            else if (t[2] === 'from' || t[2] === 'to') p = isPoint(element[t[2]]) ? element[t[2]] : null;
            else p = centroid(ends);
            break;
          }
          case 'agents':
            p = isNumber(element.x) && isNumber(element.y) ? [element.x, element.y] : null;
            break;
          case 'stairs':
            p = isNumber(element.x) && isNumber(element.y) ? [element.x, element.y] : null;
            floor = Array.isArray(element.floors) ? (element.floors.includes(E.floor) ? E.floor : element.floors.find(isNumber)) : null;
            if (floor === undefined) floor = null;
            break;
          default:
            return null;
          }
          return p ? {floor, p} : null;
        }

        function drawProblemMarkers() {
          let out = '';
          const taken = {};
          E.problems.forEach((problem, index) => {
            const place = locate(problem.path);
            if (!place || place.floor !== E.floor) return;
            const s = screen(place.p);
            const key = Math.round(s[0]) + ',' + Math.round(s[1]);
            const stack = taken[key] || 0;
            taken[key] = stack + 1;
            out += '<g class="problem-marker" data-problem="' + index + '" data-path="' + escapeText(problem.path) + '" data-x="' +
              place.p[0] + '" data-y="' + place.p[1] + '" transform="translate(' + number(s[0] + 14 * stack) + ',' + number(s[1] - 14 * stack) + ')">' +
              '<title>' + escapeText(problem.path + ': ' + problem.message) + '</title><circle r="9"/><text y="4">' + (index + 1) + '</text></g>';
          });
          return out;
        }

        function renderProblems() {
          $('#problem-count').textContent = E.problems.length ? '(' + E.problems.length + ')' : '';
          $('#problems').innerHTML = E.problems.map((problem, index) => {
            const place = locate(problem.path);
            const where = !place ? ' <em>(the document)</em>' : place.floor !== E.floor ? ' <em>(floor ' + escapeText(place.floor) + ')</em>' : '';
            return '<li data-problem="' + index + '" data-path="' + escapeText(problem.path) + '"' + (place && place.floor !== E.floor ? ' class="elsewhere"' : '') +
              '><code>' + escapeText(problem.path) + '</code> ' + escapeText(problem.message) + where + '</li>';
          }).join('');
        }

        function showProblem(index) {
          const problem = E.problems[index];
          const place = problem && locate(problem.path);
          if (!place) return;
          if (place.floor !== null && place.floor !== E.floor) showFloor(place.floor);
          const t = parsePath(problem.path);
          if (['zones', 'obstacles', 'walls', 'agents', 'stairs'].includes(t[0])) {
            E.selection = {kind: t[0], index: t[1]};
            if (t[0] === 'walls' && t[2] === 'doors' && typeof t[3] === 'number') E.selection.door = t[3];
          }
          const box = $('#plan').getBoundingClientRect();
          E.view.tx = box.width / 2 - E.view.k * place.p[0];
          E.view.ty = box.height / 2 + E.view.k * place.p[1];
          render();
          renderPanel();
        }

        """#
}
