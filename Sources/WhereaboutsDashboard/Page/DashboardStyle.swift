/// The page's style sheet, served as `/app.css` (the page allows no inline style).
enum DashboardStyle {
    static let text = #"""
        :root { --ink: #1f2a33; --muted: #5b6975; --line: #d5dbe0; --accent: #c62828; --ok: #2e7d32; --warn: #9e6a00; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
          background: #f4f6f8; }
        header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 16px; padding: 10px 18px;
          background: #22313f; color: #fff; }
        header h1 { margin: 0; font-size: 20px; font-weight: 600; }
        header .pill { padding: 1px 8px; border-radius: 10px; background: #44566a; font-size: 12px; }
        #stream-state { background: #6b5d1f; }
        body[data-stream="live"] #stream-state { background: var(--ok); }
        #locator-status[data-state="online"] { background: var(--ok); }
        #locator-status[data-state="offline"] { background: var(--accent); }
        #metrics { color: #cfd8e0; font-size: 13px; }
        #metrics.stale, #metrics-age { color: #8fa0ae; font-style: italic; font-size: 13px; }
        #source-banner { padding: 1px 10px; border-radius: 10px; background: var(--accent); font-size: 13px; }
        .pill.stale { background: #5f6b75 !important; font-style: italic; }
        nav { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; padding: 8px 18px;
          border-bottom: 1px solid var(--line); background: #fff; }
        #floor-picker button { font: inherit; padding: 4px 12px; border: 1px solid var(--line); background: #fff;
          border-radius: 4px; cursor: pointer; }
        #floor-picker button[aria-pressed="true"] { background: #22313f; color: #fff; border-color: #22313f; }
        #tag-search { font: inherit; padding: 4px 8px; width: 16em; border: 1px solid var(--line); border-radius: 4px; }
        #search-result { color: var(--muted); }
        main { display: flex; flex-wrap: wrap; gap: 16px; padding: 16px 18px; align-items: flex-start; }
        #floors { flex: 1 1 760px; display: flex; flex-wrap: wrap; gap: 16px; min-width: 0; }
        .floor-view { flex: 1 1 100%; margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px;
          min-width: 0; }
        .floor-view svg { display: block; width: 100%; height: auto; }
        aside { flex: 0 1 420px; min-width: 300px; }
        aside section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px;
          margin-bottom: 16px; }
        aside h2 { font-size: 15px; margin: 4px 0 8px; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef1f3; vertical-align: top; }
        th { color: var(--muted); font-weight: 500; font-size: 12px; }
        td.zone-count { text-align: right; font-variant-numeric: tabular-nums; width: 5em; }
        tr[data-state="unknown"] td.zone-count { color: var(--warn); font-style: italic; }
        tr[data-state="unknown"] td.zone-members { color: var(--warn); }
        td.zone-members { color: var(--muted); }
        tr.floor-heading th { padding-top: 10px; color: var(--ink); font-size: 13px; }
        #events { list-style: none; margin: 0; padding: 0; max-height: 22em; overflow: auto; }
        #events li { padding: 2px 0; border-bottom: 1px solid #eef1f3; }
        #events time { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: 8px; }
        #events li.enter span::before { content: "→ "; color: var(--ok); }
        #events li.exit span::before { content: "← "; color: var(--accent); }
        footer { padding: 0 18px 16px; color: var(--muted); font-size: 12px; }
        a { color: #1d5fa8; }

        /* The map: CSS rules override the renderer's presentation attributes. */
        .zone.zone-empty { fill: #7fa7d9; fill-opacity: 0.12; }
        .zone.zone-occupied { fill: #e07b39; fill-opacity: 0.35; }
        .zone.zone-unknown { fill: #8a8a8a; fill-opacity: 0.35; stroke: #6b6b6b; stroke-dasharray: 2 2; }
        .zone.zone-pending { fill: #cccccc; fill-opacity: 0.2; }
        text.zone-label[data-state="unknown"] { fill: #6b4c00; font-style: italic; }
        .agent.agent-offline { fill: #9e9e9e; stroke: #616161; }
        .tag-dot, .tag-accuracy { transition: transform 0.9s linear, r 0.9s linear, opacity 0.3s; }
        .tag-dot.placing, .tag-accuracy.placing { transition: none; }
        .tag-dot .dot { fill: var(--accent); stroke: #fff; stroke-width: 1.5; }
        .tag-dot .tag-name { font-size: 10px; fill: #3b1414; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
        .tag-accuracy { fill: var(--accent); fill-opacity: 0.08; stroke: var(--accent); stroke-opacity: 0.35; }
        .tag-dot.highlight .dot { fill: #ffb300; stroke: #22313f; stroke-width: 2.5; r: 8px; }
        .tag-dot.highlight .tag-name { font-weight: bold; font-size: 12px; }
        .dimmed { opacity: 0.25; }
        .tag-dot .tag-age { font-size: 9px; fill: #4a4a4a; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
        .tag-dot.stale .dot { fill: #9e9e9e; stroke: #616161; }
        .tag-dot.stale .tag-name { fill: #6b6b6b; font-style: italic; }
        .tag-accuracy.stale { fill: #9e9e9e; stroke: #9e9e9e; }
        .zone.stale.zone-occupied, .zone.stale.zone-empty { fill: #b0b0b0; }
        tr.stale td { color: #8a8a8a; font-style: italic; }
        td.zone-age, td.tag-seen { color: var(--muted); font-size: 12px; white-space: nowrap; }

        /* A zone's history page. */
        .history { max-width: 760px; margin: 16px auto; background: #fff; border: 1px solid var(--line);
          border-radius: 6px; padding: 12px 18px; }
        .history svg { width: 100%; height: auto; }
        .chart-line { fill: none; stroke: #e07b39; stroke-width: 2; }
        .chart-unknown { fill: #8a8a8a; fill-opacity: 0.3; }
        .chart-axis { stroke: #9aa5ae; stroke-width: 1; }
        .chart-label { font-size: 11px; fill: var(--muted); }
        """#
}
