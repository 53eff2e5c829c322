/// The editor's HTML: the frame the script fills in. The same for every map (the script reads the map from
/// `/edit/api/map`), so it names nothing from the map and needs no escaping.
///
/// Elements a browser test drives carry ids or `data-` attributes: tools are `#toolbar [data-tool]`, floors
/// `#floor-tabs [data-floor]`, the selection's fields `#panel [data-field]`, problems `#problems li[data-path]`,
/// the survey's controls `#survey-panel` (tags heard `[data-heard]`).
enum EditorPage {
    static let html = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Map editor · Whereabouts</title>
        <link rel="stylesheet" href="/edit/app.css">
        <script src="/edit/app.js" defer></script>
        </head>
        <body data-state="loading" data-check="pending">
        <header>
        <h1 id="site-name">Map editor</h1>
        <nav id="floor-tabs" aria-label="Floors"></nav>
        <button type="button" id="add-floor" title="Add a floor">+ floor</button>
        <span class="spacer"></span>
        <span id="check-state" aria-live="polite">checking…</span>
        <button type="button" id="undo" title="Undo (Ctrl+Z)">Undo</button>
        <button type="button" id="redo" title="Redo (Ctrl+Y)">Redo</button>
        <button type="button" id="save" title="Save (Ctrl+S)" disabled>Save</button>
        <button type="button" id="help-button" title="Keys (?)">?</button>
        </header>
        <div id="toolbar" role="toolbar" aria-label="Tools">
        <button type="button" data-tool="select" title="Select, move, drag vertices (V)">Select <kbd>V</kbd></button>
        <button type="button" data-tool="outline" title="Draw the floor's outline (O)">Outline <kbd>O</kbd></button>
        <button type="button" data-tool="wall" title="Draw walls, click by click (W)">Wall <kbd>W</kbd></button>
        <button type="button" data-tool="door" title="Put a door on a wall (D)">Door <kbd>D</kbd></button>
        <button type="button" data-tool="obstacle" title="Draw an obstacle (B)">Obstacle <kbd>B</kbd></button>
        <button type="button" data-tool="zone" title="Draw a zone (Z)">Zone <kbd>Z</kbd></button>
        <button type="button" data-tool="stairs" title="Place stairs or a lift (S)">Stairs <kbd>S</kbd></button>
        <button type="button" data-tool="agent" title="Place an agent (A)">Agent <kbd>A</kbd></button>
        <button type="button" data-tool="calibrate" title="Scale the plan: two points and a distance (K)">Scale plan <kbd>K</kbd></button>
        <button type="button" data-tool="move-underlay" title="Move the plan by dragging (M)">Move plan <kbd>M</kbd></button>
        <button type="button" data-tool="candidates" title="The plan's lines as walls and obstacles (C)">Plan lines <kbd>C</kbd></button>
        <button type="button" data-tool="survey" title="Survey: pick the survey tag, click where you stand (U)">Survey <kbd>U</kbd></button>
        <span class="group">
        <label>Wall <select id="wall-material">
        <option value="3">drywall 3 dB</option>
        <option value="6">brick 6 dB</option>
        <option value="12">concrete 12 dB</option>
        <option value="2">glass 2 dB</option>
        <option value="custom">other</option>
        </select></label>
        <label><input type="number" id="wall-loss" min="0" max="60" step="0.5" value="3"> dB</label>
        <label><input type="checkbox" id="wall-blocks"> blocks walking</label>
        </span>
        <span class="group">
        <label><input type="checkbox" id="snap-grid" checked> grid 0.05 m</label>
        <label><input type="checkbox" id="snap-plan" checked> snap to plan</label>
        <label id="plan-toggle" hidden><input type="checkbox" id="show-plan" checked> expected accuracy</label>
        </span>
        </div>
        <main>
        <div id="stage">
        <svg id="plan" xmlns="http://www.w3.org/2000/svg" aria-label="The floor"></svg>
        <div id="cursor">x –, y –</div>
        <div id="hint"></div>
        </div>
        <aside id="side">
        <section id="survey-panel" hidden aria-label="Survey">
        <h2>Survey</h2>
        <p id="survey-state">…</p>
        <div id="survey-controls">
        <form id="survey-tag-form">
        <label>Survey tag <input type="text" id="survey-tag" placeholder="ibeacon-&lt;uuid&gt;-&lt;major&gt;-&lt;minor&gt;" spellcheck="false" autocomplete="off"></label>
        <button type="submit" id="survey-start">Use this tag</button>
        </form>
        <ul id="survey-heard"></ul>
        <p class="note">Stand with the tag, click where you stand and hold still until the ring is full (turn once around). Areas still lacking samples are hatched.</p>
        <label><input type="checkbox" id="survey-route"> walk a route at <input type="number" id="survey-speed" min="0.2" max="3" step="0.1" value="1"> m/s: click its corners, then Enter</label>
        <p id="survey-message" aria-live="polite"></p>
        <div id="survey-progress"></div>
        <p><button type="button" id="survey-finish">Finish and report</button></p>
        <div id="survey-report"></div>
        <p id="survey-save-result" aria-live="polite"></p>
        </div>
        </section>
        <section id="panel" aria-label="Properties"></section>
        <section id="underlay-panel" aria-label="Floor plan picture">
        <h2>Floor plan picture</h2>
        <label class="file">Upload a PNG, JPEG or SVG <input type="file" id="underlay-file" accept=".png,.jpg,.jpeg,.svg,image/png,image/jpeg,image/svg+xml"></label>
        <p id="underlay-state">No picture on this floor.</p>
        <div id="underlay-fields" hidden>
        <label>x <input type="number" id="underlay-x" step="0.01" data-underlay="x"> m</label>
        <label>y <input type="number" id="underlay-y" step="0.01" data-underlay="y"> m</label>
        <label>scale <input type="number" id="underlay-scale" step="any" data-underlay="scale"> m/px</label>
        <label>rotation <input type="number" id="underlay-rotation" step="0.5" data-underlay="rotation"> °</label>
        <label>shown <input type="range" id="underlay-opacity" min="0" max="1" step="0.05" value="0.5"></label>
        <button type="button" id="remove-underlay">Remove picture</button>
        </div>
        <form id="calibrate-form" hidden>
        <label>The two points are <input type="number" id="calibrate-distance" min="0" step="any"> m apart</label>
        <button type="submit" id="calibrate-apply">Scale</button>
        </form>
        </section>
        <section id="candidates-panel" hidden aria-label="Plan lines">
        <h2>Plan lines</h2>
        <p id="candidate-state"></p>
        <button type="button" id="candidate-accept-wall">Wall (Enter)</button>
        <button type="button" id="candidate-accept-obstacle">Obstacle</button>
        <button type="button" id="candidate-skip">Skip (N)</button>
        </section>
        <section id="problems-panel" aria-label="Problems">
        <h2>Problems <span id="problem-count"></span></h2>
        <ol id="problems"></ol>
        </section>
        <section id="save-panel" aria-live="polite"><p id="save-result"></p></section>
        </aside>
        </main>
        <div id="help" hidden role="dialog" aria-label="Keys">
        <h2>Keys</h2>
        <table>
        <tr><td><kbd>V</kbd></td><td>select; drag an agent, stairs or a vertex of the selection (with nothing selected, a corner of the outline); drag empty space to pan</td></tr>
        <tr><td><kbd>O</kbd></td><td>draw the floor's outline (replaces it)</td></tr>
        <tr><td><kbd>W</kbd></td><td>walls: click, click, … (each click ends one wall and starts the next)</td></tr>
        <tr><td><kbd>D</kbd></td><td>door: click on a wall (it becomes one that blocks walking)</td></tr>
        <tr><td><kbd>B</kbd> <kbd>Z</kbd></td><td>obstacle, zone: click the corners; click the first corner or press Enter to close</td></tr>
        <tr><td><kbd>S</kbd> <kbd>A</kbd></td><td>stairs, agent: click where it stands</td></tr>
        <tr><td><kbd>K</kbd></td><td>scale the plan picture: click two points on it, type their distance</td></tr>
        <tr><td><kbd>M</kbd></td><td>move the plan picture: drag a point of it to where it belongs</td></tr>
        <tr><td><kbd>U</kbd></td><td>survey: pick the survey tag, click where you stand (a route: its corners, then <kbd>Enter</kbd>); finish for the accuracy report</td></tr>
        <tr><td><kbd>C</kbd></td><td>an SVG plan's lines and shapes as walls and obstacles, one by one (<kbd>Enter</kbd> accept, <kbd>N</kbd> skip)</td></tr>
        <tr><td><kbd>Enter</kbd></td><td>finish the shape or the walls being drawn</td></tr>
        <tr><td><kbd>Esc</kbd></td><td>cancel what is being drawn; clear the selection</td></tr>
        <tr><td><kbd>Backspace</kbd></td><td>while drawing: take back the last point</td></tr>
        <tr><td><kbd>Delete</kbd></td><td>delete the selection</td></tr>
        <tr><td><kbd>Ctrl</kbd>+<kbd>Z</kbd>, <kbd>Ctrl</kbd>+<kbd>Y</kbd></td><td>undo, redo</td></tr>
        <tr><td><kbd>Ctrl</kbd>+<kbd>S</kbd></td><td>save (only while the map has no problem)</td></tr>
        <tr><td><kbd>G</kbd> <kbd>P</kbd></td><td>snap to the 0.05 m grid, to the plan's lines: on or off (<kbd>Alt</kbd> held: no snapping)</td></tr>
        <tr><td><kbd>F</kbd> <kbd>+</kbd> <kbd>-</kbd></td><td>fit the floor, zoom in, out (or the mouse wheel); middle button or Space+drag pans</td></tr>
        <tr><td><kbd>PageUp</kbd> <kbd>PageDown</kbd></td><td>next, previous floor</td></tr>
        <tr><td><kbd>?</kbd></td><td>this help</td></tr>
        </table>
        <button type="button" id="help-close">Close</button>
        </div>
        </body>
        </html>

        """#
}
