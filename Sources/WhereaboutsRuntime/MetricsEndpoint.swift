public import CommandLineSupport
import Synchronization
import WhereaboutsHTTPServer
import WhereaboutsWire

/// Where a metrics endpoint listens: `PORT` alone (on loopback) or `HOST:PORT`, the host an IPv4 address or
/// `localhost`, as `whereabouts web --listen` takes it.
public struct MetricsAddress: Sendable, Hashable, CustomStringConvertible {
    /// The IPv4 address to bind.
    public let host: String
    /// The port; 0 lets the kernel pick one.
    public let port: UInt16

    /// Reads `PORT` or `HOST:PORT`; nil for anything else.
    public init?(_ text: String) {
        let full =
            !text.isEmpty && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            ? "127.0.0.1:" + text : text
        guard let configuration = try? HTTPServerConfiguration(listen: full) else { return nil }
        host = configuration.host
        port = configuration.port
    }

    /// Whether only this machine can reach it (127.0.0.0/8).
    public var isLoopback: Bool { host.hasPrefix("127.") }

    public var description: String { "\(host):\(port)" }
}

/// Serves a service's figures to Prometheus: `GET /metrics` (and `HEAD`) on an HTTP server of its own
/// (``WhereaboutsHTTPServer``, on its own thread), rendered from the last snapshot the service loop handed over.
///
/// The loop owns the figures and hands a copy over every so often (``publish(_:)``, under a `Mutex` held for the
/// copy alone); a scrape renders its copy on the server's thread. So the loop's per-reading work takes no lock, and
/// a slow or hostile scraper costs the loop nothing: the server's own budgets and timeouts bound it.
public final class MetricsEndpoint<Snapshot: Sendable>: Sendable {
    /// The address it listens on (the kernel's port when the address said 0).
    public let address: MetricsAddress
    private let server: HTTPServer
    private let latest: Latest
    private let logger: Logger

    /// The last snapshot handed over, shared by the loop (which writes it) and the server's thread (which reads it).
    private final class Latest: Sendable {
        let value: Mutex<Snapshot>

        init(_ snapshot: Snapshot) {
            value = Mutex(snapshot)
        }
    }

    /// Binds `address` (and says where in the log, with a warning when it is not loopback) and serves `initial` until
    /// the first ``publish(_:)``; nothing is served before ``serving(_:)``.
    /// `render` writes a snapshot's text, answered with `contentType` (nil: the Prometheus text format's).
    public init(
        _ address: MetricsAddress, initial: Snapshot, logger: Logger, contentType: String? = nil,
        render: @escaping @Sendable (Snapshot) -> String
    ) throws(RuntimeError) {
        let contentType = contentType ?? PrometheusText.contentType
        var configuration = HTTPServerConfiguration()
        configuration.host = address.host
        configuration.port = address.port
        // A scraper or two, and someone with curl: a small budget, and no event streams.
        configuration.maximumConnections = 16
        configuration.maximumConnectionsPerAddress = 8
        configuration.maximumStreams = 1
        configuration.maximumStreamsPerAddress = 1
        configuration.log = { line in logger.warning("metrics endpoint: \(line)") }
        let latest = Latest(initial)
        self.latest = latest
        self.logger = logger
        do {
            server = try HTTPServer(configuration) { request in
                guard request.path == "/metrics" else {
                    return HTTPResponse(
                        status: 404, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
                        body: .complete(Array("not found: the metrics are at /metrics\n".utf8)))
                }
                let snapshot = latest.value.withLock { $0 }
                return HTTPResponse(
                    status: 200,
                    headers: [(name: "Content-Type", value: contentType), (name: "Cache-Control", value: "no-store")],
                    body: .complete(Array(render(snapshot).utf8)))
            }
        } catch {
            throw RuntimeError("cannot listen on \(address) for the metrics: \(error)")
        }
        self.address = MetricsAddress(host: address.host, port: server.port)
        logger.info("metrics on http://\(self.address)/metrics")
        if !address.isLoopback {
            logger.warning("metrics served on \(address.host), not loopback: anyone who can reach it reads them")
        }
    }

    /// Hands over the figures a scrape will see from now on.
    public func publish(_ snapshot: Snapshot) {
        latest.value.withLock { $0 = snapshot }
    }

    /// Serves while `body` runs, and stops when it returns. A server that fails is logged; the service runs on.
    public func serving<Result>(_ body: () async -> Result) async -> Result {
        let server = server
        let logger = logger
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await server.run()
                } catch {
                    logger.error("metrics endpoint stopped: \(error)")
                }
            }
            let result = await body()
            server.stop()
            await group.waitForAll()
            return result
        }
    }
}

extension MetricsAddress {
    fileprivate init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
}

/// A service's source with a second taker of its effects: `tap` sees each effect first (the locator's metrics
/// snapshots, for its ``MetricsEndpoint``), then the source performs it.
public struct TappedSource<Base: ServiceSource>: ServiceSource {
    public typealias Input = Base.Input
    public typealias Effect = Base.Effect

    private let base: Base
    private let tap: @Sendable (Base.Effect) -> Void

    public init(_ base: Base, tap: @escaping @Sendable (Base.Effect) -> Void) {
        self.base = base
        self.tap = tap
    }

    public func run(into feed: inout SourceFeed<Base.Input>) async {
        await base.run(into: &feed)
    }

    public func perform(_ effect: Base.Effect) async {
        tap(effect)
        await base.perform(effect)
    }
}
