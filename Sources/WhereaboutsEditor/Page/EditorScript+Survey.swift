extension EditorScript {
    /// Survey mode: the survey tag, points clicked where the operator stands (a ring while the dwell runs), the
    /// spatial check's areas and what they lack, and the accuracy report drawn on the map, with its save.
    static let survey = #"""
        // MARK: survey mode (/edit/api/survey/*, answered by the server's live survey: EditorSurveyRoutes)

        const S = {status: null, report: null, reportPlaces: null, shownReport: null, view: 'progress', timer: null, message: ''};

        function surveyPost(path, body) {
          return request('POST', '/edit/api/survey/' + path, JSON.stringify(body || {}), 'application/json');
        }

        /// Reads the survey's status (and the report when a new one is ready); again soon while the mode is on.
        async function surveyPoll() {
          clearTimeout(S.timer);
          try {
            const response = await fetch('/edit/api/survey/status', {cache: 'no-store'});
            S.status = await response.json();
            await surveyFetchReport();
          } catch (error) {
            S.message = 'The survey\'s status cannot be read: ' + error;
          }
          renderSurvey();
          const place = surveyPlace();
          const running = S.status && S.status.report === 'running';
          if (E.tool === 'survey' || running) S.timer = setTimeout(surveyPoll, place && place.active ? 250 : 1000);
        }

        async function surveyFetchReport() {
          const status = S.status;
          if (!status || status.report !== 'ready' || status.report_places === S.reportPlaces) return;
          const response = await fetch('/edit/api/survey/report.json', {cache: 'no-store'});
          if (!response.ok) return;
          S.report = await response.json();
          S.reportPlaces = S.report.places;
          S.view = 'report';
          document.body.dataset.surveyReport = String(S.reportPlaces);
        }

        /// An operator's action: the answer is the new status, or why it was refused.
        async function surveyAct(path, body) {
          try {
            const response = await surveyPost(path, body);
            const answer = await response.json();
            if (response.ok) { S.status = answer; S.message = ''; } else S.message = answer.error || 'refused (' + response.status + ')';
          } catch (error) {
            S.message = 'The server did not answer: ' + error;
          }
          renderSurvey();
          surveyPoll();
        }

        function surveyPlace() {
          const progress = S.status && S.status.progress;
          return progress && progress.place ? progress.place : null;
        }

        function surveyStart(event) {
          event.preventDefault();
          const tag = $('#survey-tag').value.trim();
          if (!tag) { S.message = 'Type the survey tag\'s identity, or pick one the agents hear.'; renderSurvey(); return; }
          $('#survey-tag').blur();
          surveyAct('start', {tag});
        }

        /// A click on the plan in survey mode: the operator stands there (or, for a route, one more corner).
        function surveyClick(raw) {
          if (!S.status || !S.status.broker) { hint('The survey needs the editor started with a broker (see the side panel).'); return; }
          const p = snap(raw, {plan: false}).p;
          if ($('#survey-route').checked) { E.draft.push(p); render(); return; }
          S.view = 'progress';
          surveyAct('point', {floor: E.floor, x: p[0], y: p[1]});
        }

        function surveyWalk() {
          if (E.draft.length < 2) { hint('A route needs two corners or more.'); return; }
          const route = E.draft.map((p) => p.slice());
          E.draft = [];
          S.view = 'progress';
          surveyAct('walk', {floor: E.floor, route, speed: Number($('#survey-speed').value) || 1});
        }

        async function surveySave() {
          const result = $('#survey-save-result');
          result.className = '';
          result.textContent = 'saving…';
          try {
            const response = await surveyPost('save');
            const answer = await response.json();
            if (!response.ok || !answer.saved) throw new Error(answer.error || 'refused (' + response.status + ')');
            result.innerHTML = (answer.unchanged ? 'The calibrated map is the file as it was.' : 'Saved the calibrated map' + (answer.backup ? ' (the previous file is kept as .bak)' : '') + '.') +
              ' To make the locator take it:<code>' + escapeText(answer.reload || E.reload) + '</code>';
            // The editor shows the file as it now is: the page's own edits were of the older text.
            E.undo = [];
            E.redo = [];
            await load();
            document.body.dataset.surveySaved = String(Number(document.body.dataset.surveySaved || 0) + 1);
          } catch (error) {
            result.className = 'failed';
            result.textContent = 'Not saved: ' + (error.message || error);
          }
        }

        // MARK: the side panel

        /// Replaces an element's content only when it changed (a button being clicked is not swapped under the pointer).
        function setHTML(element, html) {
          if (element.dataset.html !== html) { element.innerHTML = html; element.dataset.html = html; }
        }

        function renderSurvey() {
          const status = S.status;
          const state = $('#survey-state');
          $('#survey-controls').hidden = !status || !status.broker;
          if (!status) { state.textContent = 'Reading the survey\'s state…'; return; }
          if (!status.broker) { state.innerHTML = '<span class="banner">No broker: ' + escapeText(status.hint) + '</span>'; return; }
          state.textContent = (status.connected ? 'Connected to ' : 'Not connected (yet) to ') + status.address +
            (status.directory ? '; recording into ' + status.directory : '') + (E.writable ? '' : '. Read only: open the address printed at start to survey.');
          const tag = status.progress && status.progress.tag;
          $('#survey-start').textContent = tag ? 'Change the tag' : 'Use this tag';
          setHTML($('#survey-heard'), (Array.isArray(status.heard) ? status.heard : []).slice(0, 8).map((heard) =>
            '<li><button type="button" data-heard="' + escapeText(heard.tag) + '"' + (heard.tag === tag ? ' aria-pressed="true"' : '') + '>' + escapeText(heard.tag) +
            ' · ' + heard.rssi + ' dBm · ' + heard.agents + ' agent' + (heard.agents === 1 ? '' : 's') + '</button></li>').join(''));
          $('#survey-message').textContent = status.failure ? 'Recording stopped: ' + status.failure : S.message;
          setHTML($('#survey-progress'), surveyProgressHTML(status));
          $('#survey-finish').disabled = !tag || status.report === 'running' || !E.writable;
          $('#survey-finish').textContent = status.report === 'running' ? 'Making the report…' : 'Finish and report';
          if (S.shownReport !== S.report) { $('#survey-report').innerHTML = surveyReportHTML(S.report); S.shownReport = S.report; }
          if (E.tool === 'survey') render();
        }

        function surveyProgressHTML(status) {
          const progress = status.progress;
          if (!progress || !progress.tag) return '<p>Pick the survey tag: any iBeacon the agents hear (a phone app will do).</p>';
          const place = progress.place;
          let out = '<p>Tag <code>' + escapeText(progress.tag) + '</code>: ' + progress.places + ' point' + (progress.places === 1 ? '' : 's') + ', ' +
            progress.readings + ' readings, ' + progress.samples + ' samples.';
          if (place && place.active) out += ' ' + (place.kind === 'point' ? 'Hold still: ' : 'Walking: ') + Math.round(place.progress * 100) + ' %.';
          out += '</p>';
          for (const share of progress.coverage || []) out += '<p>Floor ' + share.floor + ': ' + Math.round(share.share * 100) + ' % covered (a calibration needs 60 %).</p>';
          if (!(progress.areas || []).length) return out;
          out += '<table id="survey-areas"><tr><th>area</th><th>floor</th><th>samples</th><th>lacking</th></tr>' + progress.areas.map((area) =>
            '<tr data-area="' + escapeText(area.name) + '"' + (area.checked ? '' : ' class="lacking"') + '><td>' + escapeText(area.name) + '</td><td>' + area.floor + '</td><td>' +
            area.samples + '</td><td>' + (area.checked ? '' : area.needed) + '</td></tr>').join('') + '</table>';
          const lacking = progress.lacking || [];
          out += '<p id="survey-lacking">' + (lacking.length ? 'Still lacking samples (' + progress.minimum_area_samples + ' each): ' + escapeText(lacking.join(', ')) + '.' : 'Every area has enough samples.') + '</p>';
          return out;
        }

        const errorPair = (summary) => (summary ? summary.median.toFixed(2) + ' / ' + summary.p90.toFixed(2) : '–');

        function surveyReportHTML(report) {
          if (!report) return '';
          if (!report.ok) return '<h2>Report</h2><p class="verdict">' + escapeText(report.verdict || report.failure) + '</p>';
          let out = '<h2>Report <span id="survey-report-places">(' + report.places + ' points)</span></h2><p class="verdict">' + escapeText(report.verdict) + '</p>';
          out += '<table id="survey-report-areas"><tr><th>area</th><th>samples</th><th>before m</th><th>after m</th></tr>' + report.areas.map((area) =>
            '<tr data-area="' + escapeText(area.name) + '"><td>' + escapeText(area.name) + '</td><td>' + area.samples + '</td><td>' + (area.checked ? errorPair(area.before) : 'too few') +
            '</td><td>' + (area.checked ? errorPair(area.after) : '') + '</td></tr>').join('');
          out += '<tr><th>all</th><th>' + report.overall.samples + '</th><th>' + errorPair(report.overall.before) + '</th><th>' + errorPair(report.overall.after) + '</th></tr>';
          out += '<tr><th>expected</th><th></th><th>' + errorPair(report.expected.before) + '</th><th>' + errorPair(report.expected.after) + '</th></tr></table>';
          out += '<p>median / p90, held out by area; on the map green under 1 m, amber under 2 m, red above, grey too few samples to check. Survey next: ' + (report.survey_next.length ? escapeText(report.survey_next.join(', ')) : 'nowhere in particular') + '.</p>';
          out += '<p><a id="survey-report-link" href="/edit/api/survey/report.html" target="_blank" rel="noopener">The report as a standalone page</a></p>';
          const savable = !report.refused && typeof report.map === 'string';
          out += '<p><button type="button" id="survey-save"' + (savable && E.writable ? '' : ' disabled') + '>Save the calibrated map</button></p>';
          return out;
        }

        // MARK: on the plan

        function drawSurvey() {
          const status = S.status;
          if (E.tool !== 'survey' || !status || !status.broker) return '';
          let out = '<defs><pattern id="survey-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
            '<rect width="8" height="8" fill="#c62828" fill-opacity="0.05"/><line x1="0" y1="0" x2="0" y2="8" stroke="#c62828" stroke-opacity="0.35" stroke-width="2"/></pattern></defs>';
          out += S.view === 'report' && S.report && S.report.ok ? drawReportAreas(S.report) : drawProgressAreas(status.progress);
          for (const place of status.surveyed || []) {
            if (place[0] === E.floor) out += '<circle class="survey-place" cx="' + number(screenX(place[1])) + '" cy="' + number(screenY(place[2])) + '" r="3"/>';
          }
          return out + drawRing();
        }

        function surveyLabel(polygon, lines, attributes) {
          const centre = centroid(polygon);
          if (!centre) return '';
          return lines.map((line, i) => '<text class="survey-label"' + attributes + ' x="' + number(screenX(centre[0])) + '" y="' +
            number(screenY(centre[1]) + 15 * (i - (lines.length - 1) / 2) + 4) + '">' + escapeText(line) + '</text>').join('');
        }

        function drawProgressAreas(progress) {
          if (!progress) return '';
          return (progress.areas || []).filter((area) => area.floor === E.floor).map((area) =>
            '<polygon class="survey-area' + (area.checked ? '' : ' lacking') + '" data-area="' + escapeText(area.name) + '" data-samples="' + area.samples +
            '" data-needed="' + area.needed + '" points="' + pointsAttribute(area.polygon) + '"/>' +
            surveyLabel(area.polygon, [area.name + ': ' + area.samples + (area.checked ? ' samples' : ' (' + area.needed + ' more)')], ' data-area-label="' + escapeText(area.name) + '"')).join('');
        }

        function drawReportAreas(report) {
          const next = new Set(report.survey_next || []);
          return report.areas.filter((area) => area.floor === E.floor).map((area) => {
            const after = area.after || area.before;
            const grade = !area.checked || !after ? 'unchecked' : after.median < 1 ? 'good' : after.median < 2 ? 'fair' : 'poor';
            const figures = area.checked && area.before && area.after ? area.before.median.toFixed(2) + ' → ' + area.after.median.toFixed(2) + ' m' : 'too few samples';
            const median = (summary) => (summary ? summary.median : '');
            return '<polygon class="report-area ' + grade + (next.has(area.name) ? ' next' : '') + '" data-area="' + escapeText(area.name) +
              '" data-samples="' + area.samples + '" data-checked="' + area.checked + '" data-before="' + median(area.before) + '" data-after="' + median(area.after) +
              '" data-next="' + next.has(area.name) + '" points="' + pointsAttribute(area.polygon) + '"><title>' + escapeText(area.name + ': ' + figures) + '</title></polygon>' +
              surveyLabel(area.polygon, [area.name + ': ' + figures, area.samples + ' samples' + (next.has(area.name) ? ' · survey next' : '')], ' data-report-label="' + escapeText(area.name) + '"');
          }).join('');
        }

        /// The point or walk under way (or the last one): a ring that fills over the dwell.
        function drawRing() {
          const place = surveyPlace();
          if (!place || place.floor !== E.floor) return '';
          const radius = 16, around = 2 * Math.PI * radius;
          const done = Math.max(0, Math.min(1, place.progress));
          return '<g id="survey-ring" class="' + (place.active ? 'active' : 'done') + '" data-progress="' + done + '" data-x="' + place.x + '" data-y="' + place.y +
            '" transform="translate(' + number(screenX(place.x)) + ',' + number(screenY(place.y)) + ')"><circle class="ring-back" r="' + radius + '"/>' +
            '<circle class="ring-fill" r="' + radius + '" transform="rotate(-90)" stroke-dasharray="' + number(around * done) + ' ' + number(around) + '"/></g>';
        }

        function startSurvey() {
          $('#survey-tag-form').addEventListener('submit', surveyStart);
          $('#survey-heard').addEventListener('click', (event) => {
            const button = event.target.closest('[data-heard]');
            if (button) $('#survey-tag').value = button.dataset.heard;
          });
          $('#survey-finish').addEventListener('click', () => { S.view = 'report'; surveyAct('finish'); });
          $('#survey-report').addEventListener('click', (event) => { if (event.target.id === 'survey-save') surveySave(); });
          $('#survey-route').addEventListener('change', () => { E.draft = []; render(); });
        }

        """#
}
