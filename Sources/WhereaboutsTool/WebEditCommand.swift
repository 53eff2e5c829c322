import CommandLineSupport
import WhereaboutsCore
import WhereaboutsEditor
import WhereaboutsHTTPServer
import WhereaboutsJSON
import WhereaboutsMQTT
import WhereaboutsMapFile
import WhereaboutsSettings
import WhereaboutsSurvey

#if canImport(Glibc)
    import Glibc
#endif

/// `whereabouts web --edit MAP`: the map editor in a browser, on the same server as the live page; with a broker,
/// its survey mode too.
///
/// The editor's logic is WhereaboutsEditor's; this wires it to the HTTP server and to real files (``EditorFiles``),
/// makes the token that writes need on a listener that is not loopback, and with `--broker` runs the live survey
/// (``EditorSurveyDesk``) whose routes are answered before the editor's.
enum WebEditCommand {
    static let interface = CommandInterface(
        program: "whereabouts web --edit",
        synopsis: """
            whereabouts web --edit MAP [--listen HOST:PORT] [--duration S]
                                      [--broker URL [broker options] [--survey-dir DIR] [--survey-dwell S]]
            """,
        introduction: """
              Serves the map editor: draw each floor over a picture of its plan, see every problem as you draw, and
              save (the file's untouched parts keep their bytes; the previous file is kept as MAP.bak). A map that
              does not exist yet is started afresh and written on the first save. With a broker (as the surveyor
              account, which may read the agents' readings and nothing else), the survey mode records a survey tag's
              readings and the points clicked, reports the calibration's accuracy on the map and saves the
              calibrated map (docs/editor.md).
            """,
        sections: [
            .init(
                Setting.flagsOnly([
                    .value("edit", "MAP", "the map file to edit"),
                    .value(
                        "listen", "HOST:PORT",
                        "IPv4 address and port to serve on (port 0 picks a free one). On loopback the page saves as "
                            + "it is; elsewhere every change needs the token printed at start (in the address).",
                        default: "127.0.0.1:8080"),
                    .value("duration", "S", "stop after S seconds", default: "until Ctrl-C"),
                    .value(
                        "survey-dir", "DIR",
                        "the survey's files (made when missing; no survey files in it yet)",
                        default: "MAP-survey-<date>-<time> beside the map, made at the survey's start"),
                    .value("survey-dwell", "S", "seconds per reference point of the survey", default: "30"),
                    .value(
                        "time-scale", "X", "run the survey's clock X times faster (against `sim --speed X`)",
                        default: "1"),
                    .value("time-origin", "UNIX", "where the scaled clock starts", default: "now"),
                ]) + Setting.broker(defaultUsername: "surveyor"))
        ])

    /// What the survey tab says without a broker.
    static let withoutBroker =
        "start the editor with a broker to survey: whereabouts web --edit MAP --broker mqtt://HOST:1883 "
        + "--password-file surveyor.password (the surveyor account of the shipped ACL, docs/broker.md)"

    /// The largest request body: as large a map as the loader reads (pictures are held to 20 MB by the editor).
    static let maximumBodyBytes = 64 << 20

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let mapPath = try settings.required("edit")
        let listen = settings.value("listen") ?? "127.0.0.1:8080"
        let duration = try settings.number("duration")
        var configuration: HTTPServerConfiguration
        do {
            configuration = try HTTPServerConfiguration(listen: listen)
        } catch {
            throw UsageError("--listen: \(error)")
        }
        configuration.maximumBodyBytes = maximumBodyBytes
        let logger = Logger(label: "whereabouts-web-edit")
        configuration.log = { line in logger.warning(line) }  // refusals, at most one line every 10 s
        let token = try randomHex(bytes: 16)
        let loopback = configuration.host.hasPrefix("127.")
        let access = EditorAccess(token: token, listenerIsLoopback: loopback)
        let newMapText = EditorSite.newMapText(siteUUID: try randomUUID(), siteName: "My site")
        let editor = EditorSite(
            store: EditorFiles(mapPath: mapPath), access: access, newMapText: newMapText,
            // The planning view: the accuracy to expect per cell and zone, recomputed with every check (a few ms a
            // floor), so that it follows agents as they are dragged.
            planner: { map in AccuracyPlanJSON.encode(map).array ?? [] })
        let desk = try surveyDesk(settings, mapPath: mapPath, newMapText: newMapText, logger: logger)
        let survey = EditorSurveyRoutes(desk: desk, access: access, editor: editor, withoutBroker: withoutBroker)
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration) { request in respond(editor, survey: survey, to: request) }
        } catch {
            throw RuntimeError("cannot listen on \(listen): \(error)")
        }
        let address = "http://\(configuration.host):\(server.port)"
        writeOut("whereabouts web --edit: \(address)/edit?token=\(token)\n")
        if !loopback {
            logger.warning("serving on \(configuration.host), not loopback: saving needs the token in the address")
        }
        logger.info("editing \(mapPath) on \(address)/edit")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            if let desk {
                group.addTask {
                    // The editor goes on without the survey's broker: the page says it is not connected.
                    do { try await desk.run() } catch { logger.error("survey: the broker connection ended: \(error)") }
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
            }
            group.addTask {
                for await _ in SignalWatcher.terminationSignals() { return }
            }
            if let duration {
                group.addTask { try await Task.sleep(for: .seconds(duration)) }
            }
            defer {
                server.stop()
                group.cancelAll()
            }
            try await group.next()
        }
        return .success
    }

    /// The survey's desk when a broker is given: subscribed to the site of the map file (or of the new map).
    static func surveyDesk(_ settings: Settings, mapPath: String, newMapText: String, logger: Logger) throws
        -> EditorSurveyDesk?
    {
        guard settings.value("broker") != nil else { return nil }
        let broker = try BrokerSettings(settings, defaultUsername: "surveyor")
        if broker.insecure { logger.warning("--insecure: the broker's certificate is NOT verified") }
        var configuration = SurveySession.Configuration()
        configuration.dwell = try settings.number("survey-dwell", in: 1...3600) ?? 30
        let clock = try ScaledClock(
            scale: try settings.number("time-scale"), origin: try settings.number("time-origin"))
        let text = (try? FileAccess.readStateFile(mapPath, limit: maximumBodyBytes)) ?? nil
        let document = try? MapDocument.parse(text ?? Array(newMapText.utf8))
        guard let uuid = document?.object?["site"]?.object?["uuid"]?.string, let site = BeaconUUID(uuid) else {
            throw UsageError("\(mapPath): the survey needs the map's site UUID, and the file has none that reads")
        }
        return EditorSurveyDesk(
            options: .init(
                broker: broker, mapPath: mapPath, directory: settings.value("survey-dir"),
                configuration: configuration, clock: clock),
            site: site, logger: logger)
    }

    static func respond(_ editor: EditorSite, survey: EditorSurveyRoutes, to request: HTTPRequest) -> HTTPResponse {
        let head = request.head
        let editorRequest = EditorRequest(
            method: head.method, path: head.path, query: head.query, body: request.body,
            token: head.header("X-Whereabouts-Token"), host: head.header("Host"), origin: head.header("Origin"),
            isLoopbackPeer: request.isLoopbackPeer)
        // The survey's routes first: they hold live state the editor's pure site does not.
        let response = survey.respond(to: editorRequest) ?? editor.respond(to: editorRequest)
        return HTTPResponse(
            status: response.status, headers: response.headers.map { (name: $0.0, value: $0.1) },
            body: .complete(response.body))
    }

    /// `count` bytes from /dev/urandom as lower-case hex.
    static func randomHex(bytes count: Int) throws(RuntimeError) -> String {
        guard let file = fopen("/dev/urandom", "rb") else {
            throw RuntimeError("cannot open /dev/urandom: \(FileAccess.systemMessage())")
        }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: count)
        guard bytes.withUnsafeMutableBytes({ fread($0.baseAddress, 1, count, file) }) == count else {
            throw RuntimeError("cannot read /dev/urandom")
        }
        return bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// A random (version 4) UUID for a new map's site.
    static func randomUUID() throws(RuntimeError) -> String {
        var hex = Array(try randomHex(bytes: 16))
        hex[12] = "4"
        hex[16] = ["8", "9", "a", "b"][Int(String(hex[16]), radix: 16).map { $0 & 3 } ?? 0]
        let text = String(hex)
        let cuts = [8, 12, 16, 20].map { text.index(text.startIndex, offsetBy: $0) }
        return [
            text[..<cuts[0]], text[cuts[0]..<cuts[1]], text[cuts[1]..<cuts[2]], text[cuts[2]..<cuts[3]],
            text[cuts[3]...],
        ].joined(separator: "-")
    }
}

/// The editor's files: the map, `MAP.bak` beside it, and the underlay pictures in the map's directory. Each write
/// replaces its file whole (a temporary file renamed over it, forced to the disk), so a crash leaves the old file
/// or the new one.
struct EditorFiles: EditorStore {
    let mapPath: String

    private func picturePath(_ name: String) -> String { FileAccess.directory(of: mapPath) + "/" + name }

    func readMap() throws(EditorStoreError) -> [UInt8]? {
        do {
            return try FileAccess.readStateFile(mapPath, limit: WebEditCommand.maximumBodyBytes)
        } catch {
            throw EditorStoreError(error.message)
        }
    }

    func writeMap(_ text: [UInt8], backup: [UInt8]?) throws(EditorStoreError) {
        do {
            if let backup { try FileAccess.write(backup, to: mapPath + ".bak", durable: true) }
            try FileAccess.write(text, to: mapPath, durable: true)
        } catch {
            throw EditorStoreError(error.message)
        }
    }

    func readUnderlay(named name: String) throws(EditorStoreError) -> [UInt8]? {
        do {
            return try FileAccess.readStateFile(picturePath(name), limit: UnderlayImage.maximumBytes)
        } catch {
            throw EditorStoreError(error.message)
        }
    }

    func writeUnderlay(named name: String, bytes: [UInt8]) throws(EditorStoreError) {
        do {
            try FileAccess.write(bytes, to: picturePath(name), durable: true)
        } catch {
            throw EditorStoreError(error.message)
        }
    }
}
