import WhereaboutsCore
import WhereaboutsDrawing

/// The live page's HTML: the floors as the map renderer draws them, the zone table and the places the script
/// fills in. Static for a map, so it is built once; every name in it is escaped.
struct DashboardPage {
    let html: String

    init(map: FloorMap, renderer: MapRenderer) {
        let site = renderer.escape(map.site.name)
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(site) · Whereabouts</title>
            <link rel="stylesheet" href="/app.css">
            <script src="/app.js" defer></script>
            </head>
            <body data-stream="connecting">
            <header>
            <h1>\(site)</h1>
            <span class="pill" id="stream-state">connecting…</span>
            <span class="pill" id="locator-status" data-state="unknown">locator unknown</span>
            <span id="metrics">no metrics yet</span>
            <span id="metrics-age"></span>
            <strong id="source-banner" role="status" hidden></strong>
            </header>
            <nav>
            <div id="floor-picker" role="group" aria-label="Floor">
            <button type="button" data-floor="all" aria-pressed="true">All floors</button>

            """
        for floor in map.floors {
            out += #"<button type="button" data-floor="\#(floor.major)" aria-pressed="false">"#
            out += renderer.escape(floor.name) + "</button>\n"
        }
        out += """
            </div>
            <label>Find a tag <input id="tag-search" type="search" placeholder="name or id" autocomplete="off"></label>
            <span id="search-result" aria-live="polite"></span>
            </nav>
            <main>
            <div id="floors">

            """
        for floor in map.floors {
            out += #"<figure class="floor-view" data-floor="\#(floor.major)">"# + "\n"
            out += renderer.liveFloorSVG(map: map, floor: floor)
            out += "</figure>\n"
        }
        out += Self.aside(map: map, renderer: renderer)
        html = out
    }

    /// The zone table, the events, the tag and agent lists, and the end of the page.
    private static func aside(map: FloorMap, renderer: MapRenderer) -> String {
        var out = """
            </div>
            <aside>
            <section>
            <h2>Zones</h2>
            <table id="zones">
            <thead><tr><th>Zone</th><th>Tags</th><th>Who</th><th>Age</th></tr></thead>
            <tbody>

            """
        for floor in map.floors {
            out += #"<tr class="floor-heading"><th colspan="4">"# + renderer.escape(floor.name) + "</th></tr>\n"
            for zone in map.zones(onFloor: floor.major) {
                let key = zone.key.pageKey
                out += #"<tr data-zone="\#(key)" data-state="pending">"#
                out += #"<td class="zone-name"><a href="/zones/\#(key)" title="the last hour">"#
                out += renderer.escape(zone.name) + "</a></td>"
                out += #"<td class="zone-count" data-count="">–</td><td class="zone-members"></td>"#
                out += #"<td class="zone-age"></td></tr>"# + "\n"
            }
        }
        out += """
            </tbody>
            </table>
            </section>
            <section>
            <h2>Recent events</h2>
            <ol id="events"></ol>
            </section>
            <section>
            <h2>Tags</h2>
            <table id="tag-list">
            <thead><tr><th>Tag</th><th>Where (how likely)</th><th>Last seen</th></tr></thead>
            <tbody></tbody>
            </table>
            </section>
            <section>
            <h2>Agents</h2>
            <table id="agent-list">
            <thead><tr><th>Agent</th><th>Status</th><th>Last seen</th></tr></thead>
            <tbody>

            """
        for agent in map.agents {
            let id = renderer.escape(agent.id)
            out += #"<tr data-agent-row="\#(id)"><td>\#(id)</td><td class="agent-state">not said</td><td></td></tr>"#
            out += "\n"
        }
        out += """
            </tbody>
            </table>
            </section>
            </aside>
            </main>
            <footer>Dots are tags, circles their estimated accuracy; zones read <em>unknown</em> when every agent \
            covering them is silent. Grey means not current: the locator, the broker or this page's server is gone, \
            or a dot's zone is unknown; the age says how old it is. Zone names link to the last hour.</footer>
            </body>
            </html>

            """
        return out
    }
}
