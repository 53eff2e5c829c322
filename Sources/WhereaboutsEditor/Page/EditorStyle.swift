/// The editor's style sheet. Shapes are coloured here by class (the page's policy allows no inline style).
enum EditorStyle {
    static let text = #"""
        * { box-sizing: border-box; }
        html, body { margin: 0; height: 100%; }
        body { font: 14px/1.35 system-ui, sans-serif; color: #1d2430; background: #eef0f2; display: flex;
          flex-direction: column; }
        header, #toolbar { display: flex; align-items: center; gap: 6px; padding: 6px 10px; background: #fff;
          border-bottom: 1px solid #d4d8dd; flex-wrap: wrap; }
        header h1 { font-size: 17px; margin: 0 10px 0 0; }
        .spacer { flex: 1; }
        button { font: inherit; padding: 3px 9px; border: 1px solid #aab2bc; border-radius: 4px; background: #f6f7f8;
          cursor: pointer; }
        button:hover:not([disabled]) { background: #e4e8ec; }
        button[disabled] { opacity: 0.45; cursor: not-allowed; }
        button[aria-pressed="true"] { background: #2d5f9a; color: #fff; border-color: #2d5f9a; }
        #save:not([disabled]) { background: #2e7d32; color: #fff; border-color: #2e7d32; }
        kbd { font: 11px monospace; padding: 0 3px; border: 1px solid #b8bec6; border-radius: 3px; background: #fff;
          color: #333; }
        button[aria-pressed="true"] kbd { color: #2d5f9a; }
        .group { display: inline-flex; gap: 8px; align-items: center; margin-left: 10px; padding-left: 10px;
          border-left: 1px solid #d4d8dd; }
        #wall-loss { width: 5em; }
        #check-state { padding: 2px 8px; border-radius: 10px; background: #ddd; }
        body[data-check="ok"] #check-state { background: #c8e6c9; }
        body[data-check="invalid"] #check-state { background: #ffcdd2; }
        #floor-tabs button .count { display: inline-block; margin-left: 4px; padding: 0 5px; border-radius: 8px;
          background: #c62828; color: #fff; font-size: 11px; }
        main { flex: 1; display: flex; min-height: 0; }
        #stage { flex: 1; position: relative; overflow: hidden; background: #fafafa; }
        #plan { position: absolute; left: 0; top: 0; width: 100%; height: 100%; touch-action: none;
          user-select: none; cursor: crosshair; }
        body[data-tool="select"] #plan { cursor: default; }
        body[data-tool="move-underlay"] #plan { cursor: move; }
        #cursor, #hint { position: absolute; left: 8px; padding: 2px 6px; background: rgba(255, 255, 255, 0.85);
          border-radius: 3px; font-size: 12px; pointer-events: none; }
        #cursor { bottom: 8px; font-family: monospace; }
        #hint { top: 8px; }
        #hint:empty { display: none; }
        aside { width: 330px; overflow-y: auto; background: #fff; border-left: 1px solid #d4d8dd; padding: 0 12px; }
        aside h2 { font-size: 14px; margin: 14px 0 6px; }
        aside label { display: block; margin: 4px 0; }
        aside input[type="text"], aside input[type="number"] { width: 9em; }
        aside label.check { display: inline-block; margin-right: 10px; }
        #panel .row { display: flex; gap: 6px; align-items: center; margin: 4px 0; }
        #panel .row label { margin: 0; }
        #panel fieldset.tag { border: 1px solid #d5dbe1; border-radius: 4px; margin: 6px 0; padding: 4px 6px; }
        #problems { padding-left: 22px; margin: 0; }
        #problems li { margin: 3px 0; cursor: pointer; }
        #problems li code { font-size: 12px; color: #8e1b1b; }
        #problems li.elsewhere { color: #666; }
        #save-result { color: #1b5e20; }
        #save-result.failed { color: #b71c1c; }
        #save-result code { display: block; margin-top: 4px; padding: 4px; background: #f1f3f4; font-size: 12px; }
        .banner { margin: 8px 0; padding: 6px 8px; background: #fff3cd; border: 1px solid #e0c878; border-radius: 4px; }
        #help { position: fixed; left: 50%; top: 70px; transform: translateX(-50%); max-width: 760px; background: #fff;
          border: 1px solid #99a; border-radius: 6px; padding: 8px 18px 14px; box-shadow: 0 6px 30px rgba(0, 0, 0, 0.25); }
        #help td { padding: 2px 8px; vertical-align: top; }
        /* The drawing: plan metres drawn in screen pixels, so strokes keep their width at any zoom. */
        #plan .outline { fill: #fff; stroke: #333; stroke-width: 2; }
        #plan .other-outline { fill: none; stroke: #bbb; stroke-dasharray: 4 4; }
        #plan .zone { fill: #7fa7d9; fill-opacity: 0.18; stroke: #4a6d99; stroke-dasharray: 5 3; }
        #plan .zone-label { font-size: 12px; fill: #22313f; text-anchor: middle; pointer-events: none; }
        #plan .obstacle { fill: #b5b5ad; fill-opacity: 0.8; stroke: #6d6d66; }
        #plan .wall { stroke: #555; stroke-linecap: round; }
        #plan .wall.blocking { stroke: #222; }
        #plan .wall-hit { stroke: transparent; stroke-width: 12; }
        #plan .door { stroke: #e6a23c; stroke-width: 5; stroke-linecap: butt; }
        #plan .stairs { fill: #c9b458; stroke: #6b5d1f; }
        #plan .agent { fill: #2e7d32; stroke: #1b4d1e; }
        #plan .agent-label { font-size: 11px; fill: #1b4d1e; pointer-events: none; }
        #plan .selected { stroke: #d81b60 !important; stroke-width: 3; }
        #plan .wall.selected, #plan .door.selected { stroke-width: 6; }
        #plan .has-problem { stroke: #c62828 !important; }
        #plan .handle { fill: #fff; stroke: #d81b60; stroke-width: 2; cursor: move; }
        #plan .draft { fill: rgba(216, 27, 96, 0.08); stroke: #d81b60; stroke-width: 2; stroke-dasharray: 6 3;
          pointer-events: none; }
        #plan .draft-point { fill: #d81b60; pointer-events: none; }
        #plan .snap { fill: none; stroke: #00897b; stroke-width: 2; pointer-events: none; }
        #plan .snap.grid { stroke: #90a4ae; }
        #plan .measure { stroke: #00897b; stroke-width: 2; stroke-dasharray: 4 2; }
        #plan .candidate { fill: none; stroke: #7b1fa2; stroke-width: 2; stroke-dasharray: 3 3; stroke-opacity: 0.4; }
        #plan .candidate.current { stroke-opacity: 1; stroke-width: 4; }
        #plan .problem-marker circle { fill: #c62828; stroke: #fff; stroke-width: 2; }
        #plan .problem-marker text { fill: #fff; font-size: 11px; font-weight: bold; text-anchor: middle;
          pointer-events: none; }
        #plan .plan-cell { pointer-events: none; }
        /* Survey mode: the side panel is the survey's; on the plan, areas, places surveyed, the ring, the report. */
        body[data-tool="survey"] #panel, body[data-tool="survey"] #underlay-panel { display: none; }
        body[data-tool="survey"] #plan { cursor: cell; }
        #survey-panel .note { color: #555; font-size: 12px; }
        #survey-heard { list-style: none; padding: 0; margin: 4px 0; }
        #survey-heard button { width: 100%; text-align: left; font-size: 12px; margin: 1px 0; overflow-wrap: anywhere; }
        aside #survey-tag { width: 100%; font-family: monospace; font-size: 12px; }
        aside #survey-speed { width: 4.5em; }
        #survey-message { color: #b71c1c; }
        #survey-panel table { border-collapse: collapse; font-size: 12px; margin: 4px 0; }
        #survey-panel td, #survey-panel th { padding: 1px 5px; border-bottom: 1px solid #e3e6e9; text-align: right; }
        #survey-panel td:first-child, #survey-panel th:first-child { text-align: left; }
        #survey-panel tr.lacking td { color: #b71c1c; }
        #survey-panel .verdict { font-weight: bold; }
        #survey-save-result.failed { color: #b71c1c; }
        #survey-save-result code { display: block; margin-top: 4px; padding: 4px; background: #f1f3f4; font-size: 12px; }
        #plan .survey-area { fill: #4a6d99; fill-opacity: 0.06; stroke: #4a6d99; stroke-dasharray: 2 3; }
        #plan .survey-area.lacking { fill: url(#survey-hatch); fill-opacity: 1; stroke: #c62828; }
        #plan .survey-label { font-size: 12px; fill: #22313f; text-anchor: middle; pointer-events: none;
          paint-order: stroke; stroke: #fff; stroke-width: 3; }
        #plan .survey-place { fill: #6a1b9a; fill-opacity: 0.7; pointer-events: none; }
        #plan .ring-back { fill: rgba(255, 255, 255, 0.8); stroke: #d0d4d9; stroke-width: 5; }
        #plan .ring-fill { fill: none; stroke: #6a1b9a; stroke-width: 5; }
        #plan #survey-ring.done .ring-fill { stroke: #2e7d32; }
        #plan .report-area { stroke: #555; stroke-width: 1; fill-opacity: 0.35; }
        #plan .report-area.good { fill: #43a047; }
        #plan .report-area.fair { fill: #fbc02d; }
        #plan .report-area.poor { fill: #e53935; }
        #plan .report-area.unchecked { fill: #9e9e9e; }
        #plan .report-area.next { stroke: #c62828; stroke-width: 3; stroke-dasharray: 8 4; }
        #plan .grid-line { stroke: #e3e6e9; stroke-width: 1; }
        #plan .axis-line { stroke: #c5cbd1; stroke-width: 1; }
        """#
}
