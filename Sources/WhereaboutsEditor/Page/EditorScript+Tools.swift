extension EditorScript {
    /// Snapping, the drawing tools, the pointer and the keys.
    static let tools = #"""
        // MARK: snapping

        /// The vertices of the current floor's map that a point may snap to (the element being dragged left out).
        function mapVertices(skip) {
          const points = [];
          const add = (p, owner) => { if (isPoint(p) && owner !== skip) points.push(p); };
          const floor = currentFloor();
          if (floor && Array.isArray(floor.outline)) floor.outline.forEach((p) => add(p, floor.outline));
          for (const key of ['zones', 'obstacles']) {
            for (const element of list(key)) if (onFloor(element) && Array.isArray(element.polygon)) element.polygon.forEach((p) => add(p, element.polygon));
          }
          for (const wall of list('walls')) if (onFloor(wall)) { add(wall.from, wall); add(wall.to, wall); }
          for (const p of E.draft) add(p, null);
          return points;
        }

        /// Where a click at `raw` lands: an existing vertex, a vertex or line of the plan picture, the grid, or as it is.
        function snap(raw, options = {}) {
          if (E.altHeld) return {p: [round3(raw[0]), round3(raw[1])], kind: 'free'};
          const tolerance = SNAP_PIXELS / E.view.k;
          let best = null, bestDistance = tolerance;
          const consider = (p, kind) => {
            const d = distance(p, raw);
            if (d < bestDistance) { best = {p, kind}; bestDistance = d; }
          };
          if (!options.planOnly) for (const p of mapVertices(options.skip)) consider(p, 'vertex');
          if (!best && E.snapPlan && options.plan !== false) {
            const plan = planGeometry();
            for (const p of plan.vertices) consider(p, 'plan');
            if (!best && !options.planOnly) for (const [a, b] of plan.segments) consider(closestOnSegment(raw, a, b), 'line');
          }
          if (!best && E.snapGrid && !options.planOnly) best = {p: [Math.round(raw[0] / GRID) * GRID, Math.round(raw[1] / GRID) * GRID], kind: 'grid'};
          if (!best) best = {p: raw, kind: 'free'};
          // Points of the map are kept to the millimetre; points of the picture (to scale and move it by) exactly.
          return options.planOnly ? best : {p: [round3(best.p[0]), round3(best.p[1])], kind: best.kind};
        }

        // MARK: making elements

        function finishShape() {
          const points = E.draft;
          if (points.length < 3) { E.draft = []; render(); return; }
          const floor = currentFloor();
          if (!floor) return;
          const polygon = points.map((p) => p.slice());
          E.draft = [];
          commit(() => {
            if (E.tool === 'outline') {
              floor.outline = polygon;
              E.selection = null;
            } else if (E.tool === 'zone') {
              const zones = ensureList('zones');
              zones.push({floor: E.floor, minor: nextMinor(), name: 'Zone ' + (zones.filter(onFloor).length + 1), polygon});
              E.selection = {kind: 'zones', index: zones.length - 1};
            } else {
              const obstacles = ensureList('obstacles');
              obstacles.push({floor: E.floor, polygon});
              E.selection = {kind: 'obstacles', index: obstacles.length - 1};
            }
          });
        }

        function wallSettings() {
          return {loss: Number($('#wall-loss').value) || 0, blocks: $('#wall-blocks').checked};
        }

        function addWall(from, to) {
          if (samePoint(from, to)) return;
          const settings = wallSettings();
          commit(() => {
            const walls = ensureList('walls');
            const wall = {floor: E.floor, from: from.slice(), to: to.slice(), loss: settings.loss};
            if (settings.blocks) wall.blocks_walking = true;
            walls.push(wall);
            E.selection = {kind: 'walls', index: walls.length - 1};
          });
        }

        function addDoor(raw) {
          let best = null, bestDistance = 12 / E.view.k;
          list('walls').forEach((wall, index) => {
            if (!onFloor(wall) || !isPoint(wall.from) || !isPoint(wall.to)) return;
            const d = distance(closestOnSegment(raw, wall.from, wall.to), raw);
            if (d < bestDistance) { best = index; bestDistance = d; }
          });
          if (best === null) { hint('Click on a wall to put a door in it.'); return; }
          commit(() => {
            const wall = list('walls')[best];
            const length = distance(wall.from, wall.to);
            const width = Math.min(0.9, Math.max(0.3, length - 0.01));
            const half = width / 2 / length;
            // The door's centre: on the wall, snapped to the grid along it, and wholly on the wall.
            let at = closestOnSegment(raw, wall.from, wall.to);
            let t = distance(at, wall.from) / length;
            if (E.snapGrid && !E.altHeld) t = Math.round(t * length / GRID) * GRID / length;
            t = Math.max(half, Math.min(1 - half, t));
            at = [round3(wall.from[0] + t * (wall.to[0] - wall.from[0])), round3(wall.from[1] + t * (wall.to[1] - wall.from[1]))];
            wall.blocks_walking = true;
            if (!Array.isArray(wall.doors)) wall.doors = [];
            wall.doors.push({at, width});
            E.selection = {kind: 'walls', index: best, door: wall.doors.length - 1};
          });
        }

        function addStairs(p) {
          const majors = floors().map((f) => f.major).sort((a, b) => a - b);
          const here = majors.indexOf(E.floor);
          const other = majors[here + 1] !== undefined ? majors[here + 1] : majors[here - 1];
          commit(() => {
            const stairs = ensureList('stairs');
            stairs.push({floors: other === undefined ? [E.floor] : [E.floor, other].sort((a, b) => a - b), x: p[0], y: p[1]});
            E.selection = {kind: 'stairs', index: stairs.length - 1};
          });
        }

        function addAgent(p) {
          commit(() => {
            const agents = ensureList('agents');
            agents.push({id: nextAgentId(), floor: E.floor, x: p[0], y: p[1], z: 2.4});
            E.selection = {kind: 'agents', index: agents.length - 1};
          });
        }

        function addFloor() {
          const majors = floors().map((f) => f.major).filter(isNumber);
          const major = majors.length ? Math.max(...majors) + 1 : 1;
          const heights = floors().map((f) => (isNumber(f.height) ? f.height : 0));
          const template = currentFloor();
          commit(() => {
            const outline = template && Array.isArray(template.outline) ? JSON.parse(JSON.stringify(template.outline)) : [[0, 0], [10, 0], [10, 10], [0, 10]];
            ensureList('floors').push({major, name: 'Floor ' + major, height: heights.length ? Math.max(...heights) + 3.5 : 0, outline});
            E.floor = major;
            E.selection = null;
          });
          fit();
        }

        function deleteSelection() {
          const selection = E.selection;
          if (!selection || !selected()) return;
          commit(() => {
            if (selection.door !== undefined) list('walls')[selection.index].doors.splice(selection.door, 1);
            else list(selection.kind).splice(selection.index, 1);
            E.selection = null;
          });
        }

        function deleteFloor() {
          const floor = currentFloor();
          if (!floor || floors().length < 2) return;
          commit(() => {
            E.doc.floors.splice(E.doc.floors.indexOf(floor), 1);
            for (const key of ['zones', 'obstacles', 'walls', 'agents']) {
              if (Array.isArray(E.doc[key])) E.doc[key] = E.doc[key].filter((e) => !onFloor(e));
            }
            if (Array.isArray(E.doc.stairs)) {
              for (const s of E.doc.stairs) if (s && Array.isArray(s.floors)) s.floors = s.floors.filter((m) => m !== E.floor);
            }
            E.selection = null;
            E.floor = floors()[0].major;
          });
          fit();
        }

        // MARK: tools

        const TOOL_HINTS = {
          select: 'Click to select; drag agents, stairs and the selection\'s vertices (with nothing selected, the outline\'s corners); drag empty space to pan.',
          outline: 'Click the floor\'s corners; click the first again or press Enter to close. Esc cancels.',
          zone: 'Click the zone\'s corners; click the first again or press Enter to close. Esc cancels.',
          obstacle: 'Click the obstacle\'s corners; click the first again or press Enter to close. Esc cancels.',
          wall: 'Click where the wall starts, then where it ends; each click starts the next wall. Enter or Esc stops.',
          door: 'Click on a wall to put a door in it.',
          stairs: 'Click where the stairs or the lift are.',
          agent: 'Click where the agent stands.',
          calibrate: 'Click two points of the plan picture whose distance you know, then type it.',
          'move-underlay': 'Drag a point of the plan picture to where it belongs.',
          candidates: 'The plan\'s lines: Enter takes the highlighted one, N skips it; or click one.',
          survey: 'Stand with the survey tag and click where you stand; hold still until the ring is full.',
        };

        function hint(textToShow) { $('#hint').textContent = textToShow; }

        function setTool(tool) {
          if (!TOOL_HINTS[tool]) return;
          E.tool = tool;
          E.draft = [];
          E.measure = [];
          $('#calibrate-form').hidden = true;
          document.body.dataset.tool = tool;
          for (const button of document.querySelectorAll('#toolbar [data-tool]')) button.setAttribute('aria-pressed', String(button.dataset.tool === tool));
          $('#candidates-panel').hidden = tool !== 'candidates';
          $('#survey-panel').hidden = tool !== 'survey';
          if (tool === 'survey') surveyPoll();
          hint(TOOL_HINTS[tool]);
          refreshCandidates();
          render();
        }

        function cancel() {
          if (E.draft.length || E.measure.length) {
            E.draft = [];
            E.measure = [];
            $('#calibrate-form').hidden = true;
          } else if (E.tool !== 'select') {
            setTool('select');
          } else {
            E.selection = null;
            renderPanel();
          }
          render();
        }
        // MARK: the pointer

        function selectionFromTarget(target) {
          const shape = target.closest('[data-path]');
          if (!shape || shape.classList.contains('problem-marker')) return null;
          const t = parsePath(shape.dataset.path);
          if (!t || typeof t[1] !== 'number') return null;
          if (t[0] === 'floors') return null;
          const selection = {kind: t[0], index: t[1]};
          if (t[2] === 'doors') selection.door = t[3];
          return selection;
        }

        function pointerDown(event) {
          const svg = $('#plan');
          svg.setPointerCapture(event.pointerId);
          const raw = planPoint(event);
          if (event.button === 1 || E.spaceHeld) { startPan(event); return; }
          if (event.button !== 0) return;
          const marker = event.target.closest('.problem-marker');
          if (marker) { showProblem(Number(marker.dataset.problem)); return; }
          switch (E.tool) {
          case 'select': selectDown(event); break;
          case 'outline': case 'zone': case 'obstacle': {
            const point = snap(raw).p;
            if (E.draft.length >= 3 && samePoint(point, E.draft[0])) finishShape();
            else if (!E.draft.length || !samePoint(point, E.draft[E.draft.length - 1])) E.draft.push(point);
            render();
            break;
          }
          case 'wall': {
            const point = snap(raw).p;
            if (E.draft.length) addWall(E.draft[0], point);
            E.draft = [point];
            render();
            break;
          }
          case 'door': addDoor(raw); break;
          case 'stairs': addStairs(snap(raw, {plan: false}).p); break;
          case 'agent': addAgent(snap(raw, {plan: false}).p); break;
          case 'calibrate': calibrateClick(snap(raw, {planOnly: true}).p); break;
          case 'move-underlay': startUnderlayDrag(raw); break;
          case 'candidates': pickCandidate(raw); break;
          case 'survey': surveyClick(raw); break;
          }
        }

        function selectDown(event) {
          const handle = event.target.closest('.handle');
          if (handle) {
            const h = handles()[Number(handle.dataset.handle)];
            E.drag = {kind: 'vertex', handle: h, before: JSON.stringify(E.doc), moved: false};
            return;
          }
          const selection = selectionFromTarget(event.target);
          E.selection = selection;
          renderPanel();
          render();
          if (selection && (selection.kind === 'agents' || selection.kind === 'stairs')) {
            E.drag = {kind: 'point', selection, before: JSON.stringify(E.doc), moved: false};
          } else if (!selection) {
            startPan(event);
          }
        }

        function startPan(event) {
          E.drag = {kind: 'pan', x: event.clientX, y: event.clientY, tx: E.view.tx, ty: E.view.ty};
        }

        function pointerMove(event) {
          const raw = planPoint(event);
          const drag = E.drag;
          if (drag && drag.kind === 'pan') {
            E.view.tx = drag.tx + event.clientX - drag.x;
            E.view.ty = drag.ty + event.clientY - drag.y;
            render();
            return;
          }
          if (drag && drag.kind === 'underlay') { moveUnderlay(raw); return; }
          const planOnly = E.tool === 'calibrate' || E.tool === 'move-underlay';
          const noPlan = E.tool === 'agent' || E.tool === 'stairs' || (drag && drag.kind === 'point');
          const skip = drag && drag.kind === 'vertex' ? ownerOf(drag.handle) : undefined;
          E.hover = E.tool === 'select' && !drag ? null : snap(raw, {planOnly, plan: !noPlan, skip});
          const shown = E.hover ? E.hover.p : raw;
          const expected = planAt(shown);
          $('#cursor').textContent = 'x ' + shown[0].toFixed(2) + ' m, y ' + shown[1].toFixed(2) + ' m' + (E.hover && E.hover.kind !== 'free' ? ' (' + E.hover.kind + ')' : '') +
            (expected === null ? '' : '; expected accuracy ' + expected.toFixed(1) + ' m');
          if (drag && drag.kind === 'vertex') {
            const element = drag.handle.floor ? currentFloor() : selected();
            if (drag.handle.key === 'from' || drag.handle.key === 'to') element[drag.handle.key] = E.hover.p;
            else element[drag.handle.key][drag.handle.i] = E.hover.p;
            drag.moved = true;
          } else if (drag && drag.kind === 'point') {
            const element = selected(drag.selection);
            element.x = E.hover.p[0];
            element.y = E.hover.p[1];
            drag.moved = true;
          }
          render();
        }

        function ownerOf(handle) {
          const element = handle.floor ? currentFloor() : selected();
          return handle.key === 'from' || handle.key === 'to' ? element : element[handle.key];
        }

        function pointerUp() {
          const drag = E.drag;
          E.drag = null;
          if (!drag) return;
          if ((drag.kind === 'vertex' || drag.kind === 'point' || drag.kind === 'underlay') && drag.moved) {
            // The drag changed the document in place: record it as one step.
            if (JSON.stringify(E.doc) !== drag.before) record(snapshot(drag.before));
          }
        }

        function wheel(event) {
          event.preventDefault();
          const box = $('#plan').getBoundingClientRect();
          zoom(Math.exp(-event.deltaY * 0.0015), event.clientX - box.left, event.clientY - box.top);
        }

        // MARK: keys

        const TOOL_KEYS = {v: 'select', o: 'outline', w: 'wall', d: 'door', b: 'obstacle', z: 'zone', s: 'stairs', a: 'agent',
          k: 'calibrate', m: 'move-underlay', c: 'candidates', u: 'survey'};

        function keyDown(event) {
          E.altHeld = event.altKey;
          const typing = event.target.closest && event.target.closest('input, select, textarea');
          const key = event.key;
          const command = event.ctrlKey || event.metaKey;
          if (command && (key === 's' || key === 'S')) { event.preventDefault(); save(); return; }
          if (typing) {
            if (key === 'Escape') event.target.blur();
            return;
          }
          if (command && !event.shiftKey && (key === 'z' || key === 'Z')) { event.preventDefault(); undo(); return; }
          if (command && (key === 'y' || key === 'Y' || (event.shiftKey && (key === 'z' || key === 'Z')))) { event.preventDefault(); redo(); return; }
          if (command || event.altKey) return;
          if (key === ' ') { E.spaceHeld = true; event.preventDefault(); return; }
          if (!$('#help').hidden && key === 'Escape') { $('#help').hidden = true; return; }
          const handled = keyCommand(key);
          if (handled) event.preventDefault();
        }

        function keyCommand(key) {
          const lower = key.length === 1 ? key.toLowerCase() : key;
          if (E.tool === 'candidates' && (key === 'Enter' || lower === 'n')) { key === 'Enter' ? acceptCandidate() : skipCandidate(); return true; }
          if (TOOL_KEYS[lower]) { setTool(TOOL_KEYS[lower]); return true; }
          switch (key) {
          case 'Escape': cancel(); return true;
          case 'Enter':
            if (['outline', 'zone', 'obstacle'].includes(E.tool)) finishShape();
            else if (E.tool === 'wall') { E.draft = []; render(); }
            else if (E.tool === 'survey' && E.draft.length) surveyWalk();
            return true;
          case 'Backspace':
            if (E.draft.length) { E.draft.pop(); render(); } else deleteSelection();
            return true;
          case 'Delete': deleteSelection(); return true;
          case 'PageUp': stepFloor(1); return true;
          case 'PageDown': stepFloor(-1); return true;
          case '?': case 'h': case 'H': $('#help').hidden = !$('#help').hidden; return true;
          case 'f': case 'F': fit(); return true;
          case 'g': case 'G': $('#snap-grid').checked = E.snapGrid = !E.snapGrid; return true;
          case 'p': case 'P': $('#snap-plan').checked = E.snapPlan = !E.snapPlan; return true;
          case '+': case '=': zoomCentre(1.25); return true;
          case '-': zoomCentre(0.8); return true;
          }
          return false;
        }

        function zoomCentre(factor) {
          const box = $('#plan').getBoundingClientRect();
          zoom(factor, box.width / 2, box.height / 2);
        }

        function keyUp(event) {
          E.altHeld = event.altKey;
          if (event.key === ' ') E.spaceHeld = false;
        }

        """#
}
