import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsSettings
import WhereaboutsWire

/// `whereabouts tag battery|info|provision TAG`: asks the agent that hears a tag best to run a GATT job on it, waits
/// for the result and prints it. `tag battery --all` does it for every tag with a retained position.
///
/// The agent comes from the locator's retained `…/tags/<tag>/position`, whose `nearest` names the agent that hears the
/// tag best (the locator's choice, over every agent's readings), unless `--agent` names one.
enum TagCommand {
    static let interface = CommandInterface(
        program: "whereabouts tag",
        synopsis: """
            whereabouts tag battery|info TAG --site UUID|--map FILE --broker URL [options]
                   whereabouts tag provision TAG --uuid UUID --major N --minor N --power DBM --site UUID --broker URL
                   whereabouts tag battery --all [--spread SECONDS] --map FILE --broker URL
            """,
        introduction: """
              Sends a GATT job to the agent that hears TAG best (from the locator's retained position), waits for
              its result and prints it: battery level, device information, or the configuration read back after a
              provisioning write. The agent must run with --gatt.
            """,
        sections: [
            .init(
                [
                    .value("site", "UUID", "the site's proximity UUID"),
                    .value("map", "FILE", "the floor map, whose UUID is the site (when --site is not given)"),
                ]
                    + Setting.flagsOnly([
                        .switchFlag("all", "battery only: every tag with a retained position, one after another"),
                        .value("spread", "SECONDS", "with --all: spread the jobs evenly over this long", default: "0"),
                        .value("agent", "ID", "send the job to this agent instead of the one that hears TAG best"),
                        .value("deadline", "SECONDS", "how long the agent may take, 1-120", default: "30"),
                        .value("uuid", "UUID", "provision: the proximity UUID to write"),
                        .value("major", "N", "provision: the major to write"),
                        .value("minor", "N", "provision: the minor to write"),
                        .value("power", "DBM", "provision: the measured power at 1 m to write, -127 to 20"),
                    ]) + Setting.broker(defaultUsername: "operator"))
        ],
        notes:
            "exit status: 0 every job ok, 1 a job failed (the reason is printed) or no agent hears the tag, 2 bad usage",
        positionalLimit: 2)

    /// What to do, as read from the command line.
    struct Plan {
        var operation: GATTOperation
        var tag: TagIdentity?
        var agent: AgentID?
        var spread: Double
        var deadline: Double
    }

    static func run(_ settings: Settings) async throws -> ExitStatus {
        let plan = try Self.plan(settings)
        let uuid = try site(settings)
        let broker = try BrokerSettings(settings, defaultUsername: "operator")
        let topics = Topics(site: uuid)
        let client = try MQTTClient(
            MQTTClientConfiguration(
                broker: broker, clientID: "whereabouts-tag-\(Int(WallClock.now() * 1000) % 1_000_000)"))
        let inbox = TagInbox(topics: topics)
        return try await client.withSession { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await message in client.messages { inbox.add(message) } }
                group.addTask { for await event in client.events { inbox.note(event) } }
                defer { group.cancelAll() }
                guard try await inbox.wait(for: 10, until: { $0.connected ? true : nil }) != nil else {
                    throw RuntimeError("could not reach the broker at \(broker.address) within 10 s")
                }
                let status = try await TagJobs(plan: plan, topics: topics, client: client, inbox: inbox).run()
                client.disconnect()
                return status
            }
        }
    }

    /// The site: `--site`, or else the UUID of `--map` (the daily battery round's settings give the map, as the
    /// locator's do).
    static func site(_ settings: Settings) throws -> BeaconUUID {
        if let site = settings.value("site") {
            guard let uuid = BeaconUUID(site) else { throw SettingsError.invalid("--site \"\(site)\" is not a UUID") }
            return uuid
        }
        guard let path = settings.value("map") else {
            throw SettingsError.invalid("give the site: --site UUID, or --map FILE whose UUID is the site")
        }
        return try RecordingFiles.map(path).site.uuid
    }

    /// Reads the operation, the tag and the options; throws a usage error for anything inconsistent.
    static func plan(_ settings: Settings) throws -> Plan {
        let words = settings.positionals
        let all = try settings.switchValue("all")
        guard let verb = words.first else { throw UsageError(interface.synopsisText) }
        let operation: GATTOperation
        switch verb {
        case "battery": operation = .battery
        case "info": operation = .info
        case "provision": operation = .provision(try provisioning(settings))
        default: throw UsageError("unknown job \"\(verb)\": battery, info or provision\n\(interface.synopsisText)")
        }
        if verb != "provision" {
            for name in ["uuid", "major", "minor", "power"] where settings.value(name) != nil {
                throw UsageError("--\(name) goes with provision")
            }
        }
        var tag: TagIdentity?
        if all {
            guard verb == "battery", words.count == 1 else { throw UsageError("--all goes with battery and no TAG") }
        } else {
            guard words.count == 2, let named = TagIdentity(wire: words[1]) else {
                throw UsageError("give one TAG as the locator names it (ibeacon-UUID-MAJOR-MINOR, …)")
            }
            if settings.value("spread") != nil { throw UsageError("--spread goes with --all") }
            tag = named
        }
        let agent = try settings.value("agent").map { text throws -> AgentID in
            guard let agent = AgentID(text) else { throw UsageError("--agent \"\(text)\" is not an agent id") }
            return agent
        }
        return Plan(
            operation: operation, tag: tag, agent: agent, spread: try settings.number("spread", in: 0...86_400) ?? 0,
            deadline: try settings.number("deadline", in: GATTJobRequest.deadlineRange)
                ?? GATTJobRequest.defaultDeadline
        )
    }

    private static func provisioning(_ settings: Settings) throws -> BeaconProvisioning {
        let text = try settings.required("uuid", "the proximity UUID to write")
        guard let uuid = BeaconUUID(text) else { throw UsageError("--uuid \"\(text)\" is not a UUID") }
        guard let major = try settings.integer("major", in: 0...65535),
            let minor = try settings.integer("minor", in: 0...65535),
            let power = try settings.integer("power", in: BeaconProvisioning.powerRange)
        else { throw UsageError("provision needs --uuid, --major, --minor and --power") }
        return BeaconProvisioning(uuid: uuid, major: UInt16(major), minor: UInt16(minor), power: Int8(power))
    }
}

/// What the broker sent the tool, for the job loop to look through (it polls; a person waits on it). The retained
/// positions are kept only until the targets are read; a job result is decoded once as it comes, and kept only for
/// a job this run waits on, so an hour's `--spread` holds no more than its answers.
final class TagInbox: Sendable {
    struct Contents {
        var positions: [MQTTMessage] = []
        var collectingPositions = true
        var awaited: Set<GATTJobID> = []
        /// The results of awaited jobs, by job id, with the topic (the agent) each came on.
        var results: [GATTJobID: (topic: String, result: GATTJobResult)] = [:]
        var connected = false
        var subscriptions = 0
        var acknowledged: [Int: MQTTReasonCode] = [:]
    }

    private let topics: Topics
    private let contents = Mutex(Contents())

    init(topics: Topics) { self.topics = topics }

    var subscriptionCount: Int { contents.withLock { $0.subscriptions } }

    /// The positions received so far; none are kept after this.
    func takePositions() -> [MQTTMessage] {
        contents.withLock { contents in
            contents.collectingPositions = false
            defer { contents.positions = [] }
            return contents.positions
        }
    }

    /// Keeps the result of job `id` when it comes, until ``forget(_:)``.
    func expectResult(of id: GATTJobID) { contents.withLock { _ = $0.awaited.insert(id) } }

    func forget(_ id: GATTJobID) {
        contents.withLock { contents in
            contents.awaited.remove(id)
            contents.results[id] = nil
        }
    }

    func add(_ message: MQTTMessage) {
        guard case .gattResult? = topics.parse(message.topic) else {
            contents.withLock { if $0.collectingPositions { $0.positions.append(message) } }
            return
        }
        guard let result = try? GATTJobResult(payload: String(decoding: message.payload, as: UTF8.self)),
            let id = result.id
        else { return }
        contents.withLock { if $0.awaited.contains(id) { $0.results[id] = (message.topic, result) } }
    }

    func note(_ event: MQTTConnectionEvent) {
        contents.withLock { contents in
            switch event {
            case .connected: contents.connected = true
            case .subscribed: contents.subscriptions += 1
            case .acknowledged(let id, let reason): contents.acknowledged[id] = reason
            default: break
            }
        }
    }

    /// Polls `found` every 50 ms for up to `seconds`; nil if it found nothing by then.
    func wait<T>(for seconds: Double, until found: (inout Contents) -> T?) async throws -> T? {
        let end = WallClock.monotonic() + seconds
        while true {
            if let value = contents.withLock({ found(&$0) }) { return value }
            guard WallClock.monotonic() < end else { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
