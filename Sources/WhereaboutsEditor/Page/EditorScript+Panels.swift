extension EditorScript {
    /// The side panel's properties, and the floor-plan picture: upload, scale by two points, move, rotate.
    static let panels = #"""
        // MARK: the side panel: the selection's properties, or the floor's

        function field(label, name, value, type, extra = '') {
          const shown = value === undefined || value === null ? '' : value;
          const attributes = type === 'number' ? ' type="number" step="any"' : ' type="text"';
          return '<label>' + label + ' <input' + attributes + ' data-field="' + name + '" data-type="' + type + '" value="' + escapeText(shown) + '"' + extra + '></label>';
        }

        function checkbox(label, name, checked) {
          return '<label class="check"><input type="checkbox" data-field="' + name + '" data-type="bool"' + (checked ? ' checked' : '') + '> ' + label + '</label>';
        }

        function materialOf(loss) {
          const name = Object.keys(WALL_PRESETS).find((key) => WALL_PRESETS[key] === loss);
          return name ? String(WALL_PRESETS[name]) : 'custom';
        }

        function materialSelect(loss) {
          return '<label>Material <select data-field="material">' + Object.keys(WALL_PRESETS).map((name) =>
            '<option value="' + WALL_PRESETS[name] + '"' + (materialOf(loss) === String(WALL_PRESETS[name]) ? ' selected' : '') + '>' + name + ' ' + WALL_PRESETS[name] + ' dB</option>').join('') +
            '<option value="custom"' + (materialOf(loss) === 'custom' ? ' selected' : '') + '>other</option></select></label>';
        }

        function renderPanel() {
          const panel = $('#panel');
          const element = selected();
          if (!element) { panel.innerHTML = floorPanel(); renderUnderlayPanel(); return; }
          const kind = E.selection.door !== undefined ? 'door' : E.selection.kind;
          let out = '<h2 data-kind="' + kind + '">' + ({zones: 'Zone', walls: 'Wall', obstacles: 'Obstacle', stairs: 'Stairs or lift', agents: 'Agent', door: 'Door'})[kind] +
            ' <code>' + escapeText(pathOf(E.selection)) + '</code></h2>';
          switch (kind) {
          case 'zones':
            out += field('Name', 'name', element.name, 'text') + field('Minor', 'minor', element.minor, 'number');
            break;
          case 'walls':
            out += field('Loss (dB)', 'loss', element.loss, 'number') + materialSelect(element.loss) + checkbox('blocks walking', 'blocks_walking', element.blocks_walking === true);
            out += '<p>' + (Array.isArray(element.doors) ? element.doors.length : 0) + ' door(s): pick the door tool (D) and click on the wall.</p>';
            break;
          case 'door':
            out += field('Width (m)', 'width', element.width, 'number');
            break;
          case 'obstacles':
            out += field('Name', 'name', element.name, 'text');
            break;
          case 'stairs':
            out += '<p>Joins</p>' + floors().map((floor) => '<label class="check"><input type="checkbox" data-stairs-floor="' + escapeText(floor.major) + '"' +
              (Array.isArray(element.floors) && element.floors.includes(floor.major) ? ' checked' : '') + '> ' + escapeText(floor.name) + '</label>').join('');
            out += field('x', 'x', element.x, 'number') + field('y', 'y', element.y, 'number');
            break;
          case 'agents':
            out += field('Id', 'id', element.id, 'text') + field('Height z (m)', 'z', element.z, 'number') +
              field('x', 'x', element.x, 'number') + field('y', 'y', element.y, 'number');
            break;
          }
          out += '<p><button type="button" id="delete-selection">Delete (Del)</button></p>';
          panel.innerHTML = out;
          renderUnderlayPanel();
        }

        function floorPanel() {
          const floor = currentFloor();
          if (!floor) return '<p>No floor yet: add one.</p>';
          return '<h2 data-kind="floor">Floor <code>$.floors[' + floorIndex() + ']</code></h2>' + field('Name', 'floor.name', floor.name, 'text') +
            field('Major', 'floor.major', floor.major, 'number') + field('Height (m)', 'floor.height', floor.height, 'number') +
            '<p>Outline: ' + (Array.isArray(floor.outline) ? floor.outline.length : 0) + ' corners (the outline tool, O, redraws it).</p>' +
            (floors().length > 1 ? '<p><button type="button" id="delete-floor">Delete this floor and all on it</button></p>' : '') +
            sitePanel();
        }

        /// The site (its UUID is the one your beacons advertise), the radio model's constants and the known tags: the
        /// rest of what a map says, so that none of it needs the JSON.
        function sitePanel() {
          const site = E.doc.site || {}, model = E.doc.model || {};
          let out = '<h2 data-kind="site">Site <code>$.site</code></h2>' + field('Name', 'site.name', site.name, 'text') +
            field('UUID', 'site.uuid', site.uuid, 'text', ' spellcheck="false" size="36"') +
            '<h2 data-kind="model">Radio model <code>$.model</code></h2>' +
            field('Power at 1 m (dBm)', 'model.measured_power', model.measured_power, 'number') +
            field('Path-loss exponent', 'model.path_loss_exponent', model.path_loss_exponent, 'number') +
            field('Tag height (m)', 'model.tag_height', model.tag_height, 'number') +
            '<h2 data-kind="tags">Known tags <code>$.tags</code></h2>';
          list('tags').forEach((tag, index) => {
            if (!tag || typeof tag !== 'object') return;
            out += '<fieldset class="tag" data-tag="' + index + '">' + field('Id', 'tag.' + index + '.id', tag.id, 'text', ' spellcheck="false"') +
              field('Name', 'tag.' + index + '.name', tag.name, 'text') +
              field('Power at 1 m (dBm)', 'tag.' + index + '.measured_power', tag.measured_power, 'number') +
              '<button type="button" data-delete-tag="' + index + '">Delete tag</button></fieldset>';
          });
          return out + '<p><button type="button" id="add-tag">Add a tag</button> (id: ibeacon-UUID-major-minor)</p>';
        }

        /// A change to the site, the model or a known tag (fields named `site.…`, `model.…`, `tag.N.…`).
        function documentChange(name, value) {
          const [scope, first, second] = name.split('.');
          if (scope === 'tag') {
            const tag = list('tags')[Number(first)];
            if (tag && typeof tag === 'object') setMember(tag, second, value);
            return;
          }
          if (!E.doc[scope] || typeof E.doc[scope] !== 'object') E.doc[scope] = {};
          setMember(E.doc[scope], first, value);
        }

        function fieldValue(input) {
          if (input.dataset.type === 'bool') return input.checked;
          if (input.dataset.type === 'number') return input.value.trim() === '' ? undefined : Number(input.value);
          return input.value;
        }

        function panelChange(event) {
          const input = event.target;
          if (input.dataset.stairsFloor !== undefined) {
            const major = Number(input.dataset.stairsFloor);
            commit(() => {
              const stairs = selected();
              const joined = Array.isArray(stairs.floors) ? stairs.floors.filter((m) => m !== major) : [];
              if (input.checked) joined.push(major);
              stairs.floors = joined.sort((a, b) => a - b);
            });
            return;
          }
          const name = input.dataset.field;
          if (!name) return;
          const value = fieldValue(input);
          if (name === 'material') {
            if (input.value !== 'custom') commit(() => { selected().loss = Number(input.value); });
            return;
          }
          commit(() => {
            if (name.startsWith('site.') || name.startsWith('model.') || name.startsWith('tag.')) {
              documentChange(name, value);
            } else if (name.startsWith('floor.')) {
              const floor = currentFloor();
              const key = name.slice(6);
              setMember(floor, key, value);
              if (key === 'major' && isNumber(value)) moveFloorMajor(E.floor, value);
            } else if (name === 'blocks_walking') {
              const wall = selected();
              if (value) wall.blocks_walking = true;
              else { delete wall.blocks_walking; delete wall.doors; }
            } else {
              setMember(selected(), name, value);
            }
          });
        }

        function setMember(object, key, value) {
          if (value === undefined || (typeof value === 'number' && !isFinite(value))) delete object[key];
          else object[key] = value;
        }

        /// A floor's major changed: what stands on it follows.
        function moveFloorMajor(from, to) {
          for (const key of ['zones', 'obstacles', 'walls', 'agents']) for (const e of list(key)) if (e && e.floor === from) e.floor = to;
          for (const s of list('stairs')) if (s && Array.isArray(s.floors)) s.floors = s.floors.map((m) => (m === from ? to : m));
          E.floor = to;
        }

        function panelClick(event) {
          if (event.target.id === 'delete-selection') deleteSelection();
          if (event.target.id === 'delete-floor') deleteFloor();
          if (event.target.id === 'add-tag') {
            const uuid = E.doc.site && typeof E.doc.site.uuid === 'string' ? E.doc.site.uuid : '';
            commit(() => {
              if (!Array.isArray(E.doc.tags)) E.doc.tags = [];
              E.doc.tags.push({id: 'ibeacon-' + uuid + '-1-' + (E.doc.tags.length + 1), name: 'Tag ' + (E.doc.tags.length + 1)});
            });
          }
          if (event.target.dataset.deleteTag !== undefined) {
            const index = Number(event.target.dataset.deleteTag);
            commit(() => {
              E.doc.tags.splice(index, 1);
              if (!E.doc.tags.length) delete E.doc.tags;
            });
          }
        }

        function materialChange() {
          const value = $('#wall-material').value;
          if (value !== 'custom') $('#wall-loss').value = value;
        }

        function lossInput() {
          $('#wall-material').value = materialOf(Number($('#wall-loss').value));
        }
        // MARK: the floor-plan picture under the floor

        /// A picture's pixel (u, v), v down from its top, on the plan: origin + R(rotation) · (u · scale, −v · scale).
        function imageToPlan(underlay, u, v) {
          const angle = (isNumber(underlay.rotation) ? underlay.rotation : 0) * Math.PI / 180;
          const c = Math.cos(angle), s = Math.sin(angle);
          return [underlay.origin[0] + underlay.scale * (u * c + v * s), underlay.origin[1] + underlay.scale * (u * s - v * c)];
        }

        function planToImage(underlay, p) {
          const angle = (isNumber(underlay.rotation) ? underlay.rotation : 0) * Math.PI / 180;
          const c = Math.cos(angle), s = Math.sin(angle);
          const dx = (p[0] - underlay.origin[0]) / underlay.scale, dy = (p[1] - underlay.origin[1]) / underlay.scale;
          return [dx * c + dy * s, dx * s - dy * c];
        }

        /// The current floor's underlay when it is usable, with its picture when loaded.
        function currentUnderlay() {
          const floor = currentFloor();
          const underlay = floor && floor.underlay;
          if (!underlay || typeof underlay.file !== 'string' || !isPoint(underlay.origin) || !isNumber(underlay.scale) || underlay.scale <= 0) return null;
          return {underlay, image: E.images[underlay.file] || null};
        }

        function underlayImage() {
          const current = currentUnderlay();
          if (!current || !current.image || !current.image.width) return '';
          const {underlay, image} = current;
          const angle = (isNumber(underlay.rotation) ? underlay.rotation : 0) * Math.PI / 180;
          const k = E.view.k * underlay.scale, c = Math.cos(angle), s = Math.sin(angle);
          const matrix = [k * c, -k * s, k * s, k * c, E.view.tx + E.view.k * underlay.origin[0], E.view.ty - E.view.k * underlay.origin[1]];
          return '<image id="underlay-image" href="' + escapeText(image.url) + '" x="0" y="0" width="' + image.width + '" height="' + image.height +
            '" preserveAspectRatio="none" opacity="' + E.opacity + '" transform="matrix(' + matrix.map((v) => v.toFixed(6)).join(' ') + ')"/>';
        }

        function loadImage(file) {
          const url = '/edit/underlay/' + encodeURIComponent(file) + '?v=' + Date.now();
          const record = {url, width: 0, height: 0, shapes: [], vertices: []};
          E.images[file] = record;
          const picture = new Image();
          picture.onload = async () => {
            record.width = picture.naturalWidth;
            record.height = picture.naturalHeight;
            if (/\.svg$/i.test(file)) {
              try {
                const response = await fetch(url, {cache: 'no-store'});
                readSVGGeometry(await response.text(), record);
              } catch (error) { record.shapes = []; }
            }
            document.body.dataset.underlay = file;
            refreshCandidates();
            render();
            renderUnderlayPanel();
          };
          picture.onerror = () => { record.failed = true; renderUnderlayPanel(); };
          picture.src = url;
          return new Promise((resolve) => { picture.addEventListener('load', resolve); picture.addEventListener('error', resolve); });
        }

        async function uploadUnderlay(file) {
          const floor = currentFloor();
          if (!floor || !file) return;
          $('#underlay-state').textContent = 'uploading…';
          const response = await request('PUT', '/edit/api/underlay?floor=' + encodeURIComponent(floor.major) + '&name=' + encodeURIComponent(file.name),
            await file.arrayBuffer(), 'application/octet-stream');
          const answer = await response.json();
          if (!response.ok) { $('#underlay-state').textContent = 'Not stored: ' + answer.error; return; }
          await loadImage(answer.file);
          const image = E.images[answer.file];
          const b = bounds(floor.outline);
          commit(() => {
            if (floor.underlay && isNumber(floor.underlay.scale) && isPoint(floor.underlay.origin)) { floor.underlay.file = answer.file; return; }
            const scale = b && image.width ? Number(((b.maxX - b.minX) / image.width).toPrecision(9)) : 0.05;
            floor.underlay = {file: answer.file, origin: b ? [b.minX, b.maxY] : [0, round3(image.height * scale)], scale, rotation: 0};
          });
        }

        function renderUnderlayPanel() {
          const current = currentUnderlay();
          const floor = currentFloor();
          $('#underlay-fields').hidden = !current;
          if (!current) {
            $('#underlay-state').textContent = floor && floor.underlay ? 'The picture\'s entry is incomplete (see the problems).' : 'No picture on this floor.';
            return;
          }
          const {underlay, image} = current;
          $('#underlay-state').textContent = underlay.file + (image && image.failed ? ': the file cannot be shown' : image && image.width ? ' (' + image.width + ' × ' + image.height + ' px)' : ': loading…');
          const values = {x: underlay.origin[0], y: underlay.origin[1], scale: underlay.scale, rotation: isNumber(underlay.rotation) ? underlay.rotation : 0};
          for (const input of document.querySelectorAll('[data-underlay]')) {
            if (document.activeElement !== input) input.value = values[input.dataset.underlay];
          }
        }

        function underlayFieldChange(event) {
          const current = currentUnderlay();
          const value = Number(event.target.value);
          if (!current || !isFinite(value)) return;
          const {underlay, image} = current;
          const key = event.target.dataset.underlay;
          commit(() => {
            if (key === 'x' || key === 'y') { underlay.origin[key === 'x' ? 0 : 1] = value; return; }
            if (key === 'scale' && value <= 0) return;
            // Scale and rotation turn about the picture's middle, so it stays where it is on the screen.
            const middle = image && image.width ? [image.width / 2, image.height / 2] : [0, 0];
            const fixed = imageToPlan(underlay, middle[0], middle[1]);
            underlay[key] = value;
            const moved = imageToPlan(underlay, middle[0], middle[1]);
            underlay.origin = [round6(underlay.origin[0] + fixed[0] - moved[0]), round6(underlay.origin[1] + fixed[1] - moved[1])];
          });
        }

        const round6 = (v) => Math.round(v * 1e6) / 1e6;

        function calibrateClick(p) {
          if (!currentUnderlay()) { hint('Upload a plan picture for this floor first.'); return; }
          if (E.measure.length >= 2) E.measure = [];
          E.measure.push(p);
          if (E.measure.length === 2) {
            $('#calibrate-form').hidden = false;
            hint('Distance between the two points: ' + distance(E.measure[0], E.measure[1]).toFixed(3) + ' m as drawn now. Type the real one.');
            // After the click's own default action, which would take the focus back to the page.
            setTimeout(() => $('#calibrate-distance').focus(), 0);
          }
          render();
        }

        function applyCalibration(event) {
          event.preventDefault();
          const current = currentUnderlay();
          const real = Number($('#calibrate-distance').value);
          if (!current || E.measure.length !== 2 || !(real > 0)) return;
          const drawn = distance(E.measure[0], E.measure[1]);
          if (drawn < 1e-9) return;
          const {underlay} = current;
          const first = E.measure[0];
          const anchor = planToImage(underlay, first);
          commit(() => {
            underlay.scale = Number((underlay.scale * real / drawn).toPrecision(9));
            const moved = imageToPlan(underlay, anchor[0], anchor[1]);
            underlay.origin = [round6(underlay.origin[0] + first[0] - moved[0]), round6(underlay.origin[1] + first[1] - moved[1])];
          });
          E.measure = [];
          $('#calibrate-form').hidden = true;
          $('#calibrate-distance').blur();
          hint('Scaled. Now move the plan (M) so that a point of it lies where it belongs.');
          render();
        }

        function startUnderlayDrag(raw) {
          const current = currentUnderlay();
          if (!current) { hint('Upload a plan picture for this floor first.'); return; }
          const grabbed = snap(raw, {planOnly: true}).p;
          E.drag = {kind: 'underlay', anchor: planToImage(current.underlay, grabbed), before: JSON.stringify(E.doc), moved: false};
        }

        function moveUnderlay(raw) {
          const current = currentUnderlay();
          if (!current) return;
          const target = snap(raw, {plan: false}).p;
          const {underlay} = current;
          const now = imageToPlan(underlay, E.drag.anchor[0], E.drag.anchor[1]);
          underlay.origin = [round6(underlay.origin[0] + target[0] - now[0]), round6(underlay.origin[1] + target[1] - now[1])];
          E.drag.moved = true;
          E.hover = {p: target, kind: 'grid'};
          render();
          renderUnderlayPanel();
        }

        """#
}
