import CommandLineSupport
import Synchronization
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsSimulation
import WhereaboutsWire

/// Publishes a simulation to a broker as the map's agents: each agent runs the real agent pipeline (decoding,
/// windows, batches, the session's outbox and goodbye) on the service runner, fed the HCI advertising reports its
/// simulated controller would deliver, in (scaled) real time.
enum SimulatedAgents {
    /// What the simulation published, added up over the agents.
    struct Outcome {
        var batches = 0
        var adverts = 0
    }

    /// One agent's simulated controller: hands the pipeline what the driver heard for it.
    struct Radio: ServiceSource {
        let inputs: AsyncStream<AgentPipeline.Input>

        func run(into feed: inout SourceFeed<AgentPipeline.Input>) async {
            for await input in inputs {
                guard await feed.send(input) else { return }
            }
        }

        func perform(_ effect: AgentPipeline.Effect) async {}
    }

    /// One agent's result.
    struct AgentResult: Sendable {
        var agent: AgentID
        var failure: String?
        var connections: Int
        var batches: Int
        var adverts: Int
        var summary: String
    }

    /// One agent's runner and its state to start from.
    typealias AgentRun = (runner: ServiceRunner<AgentPipeline, Radio>, state: ServiceState<AgentPipeline>)

    /// Runs the simulation through the broker until its end or a signal.
    static func run(
        simulator: inout Simulator,
        broker: BrokerSettings,
        clock: ScaledClock,
        truth: LineWriter?,
        steering: Steering? = nil,
        progress: (Double) -> Void
    ) async throws -> Outcome {
        var radios: [AsyncStream<AgentPipeline.Input>.Continuation] = []
        var agents: [AgentRun] = []
        for agent in simulator.map.agents {
            let (inputs, continuation) = AsyncStream.makeStream(of: AgentPipeline.Input.self)
            agents.append(try agentRun(agent, of: simulator, broker: broker, clock: clock, radio: inputs))
            radios.append(continuation)
        }

        let stopped = StopCount()
        var results: [AgentResult] = []
        try await withThrowingTaskGroup(of: AgentResult.self) { group in
            for (runner, state) in agents {
                group.addTask {
                    let final = await runner.run(state)
                    stopped.count.add(1, ordering: .relaxed)
                    return AgentResult(
                        agent: final.pipeline.configuration.agent, failure: final.failure,
                        connections: final.session.connections, batches: final.pipeline.metrics.batches,
                        adverts: final.pipeline.metrics.sightings,
                        summary: final.pipeline.summary(outbox: final.session.outbox))
                }
            }
            try await drive(
                &simulator, radios: radios, clock: clock, truth: truth, steering: steering, until: stopped,
                progress: progress)
            for radio in radios {
                radio.yield(.sourceEnded(problem: nil))
                radio.finish()
            }
            for try await result in group { results.append(result) }
        }
        return try outcome(of: results, broker: broker)
    }

    /// One agent of the map as a service: the real agent pipeline on a runner with a client of its own (the
    /// agent's id as its user name unless another was given), fed by `radio`.
    static func agentRun(
        _ agent: Agent, of simulator: Simulator, broker: BrokerSettings, clock: ScaledClock,
        radio inputs: AsyncStream<AgentPipeline.Input>
    ) throws -> AgentRun {
        let map = simulator.map
        guard let id = AgentID(agent.id) else { throw RuntimeError("the map's agent id \(agent.id) is not valid") }
        // Steered tags (a survey's) are published whatever their UUID, as agents told to publish them would.
        var filter = SightingFilter(siteUUID: map.site.uuid)
        filter.namedTags = Set(simulator.configuration.steeredTags)
        var configuration = AgentPipeline.Configuration(
            agent: id, topics: Topics(site: map.site.uuid), epoch: Int(clock.origin * 1000), filter: filter)
        configuration.window = simulator.configuration.window
        let start = ServiceTime(now: clock.now(), monotonic: WallClock.monotonic())
        let state = ServiceState(pipeline: AgentPipeline(configuration: configuration, at: start))
        var settings = broker
        if settings.username == nil || settings.username == "simulator" { settings.username = agent.id }
        let client = try MQTTClient(
            MQTTClientConfiguration(
                broker: settings, clientID: "whereabouts-sim-\(agent.id)", keepAlive: .seconds(15),
                will: MQTTWill(state.session.will)))
        let runner = ServiceRunner<AgentPipeline, Radio>(
            .init(
                client: client, source: Radio(inputs: inputs), clock: { clock.now() },
                tickInterval: .milliseconds(250), logger: Logger(label: "sim \(agent.id)", level: .warning),
                brokerName: "\(broker.address)"))
        return (runner, state)
    }

    /// Steps the simulation in (scaled) real time, handing each agent's radio the advertising reports of what it
    /// heard in each window and writing the truth, until the simulation ends or an agent has stopped.
    static func drive(
        _ simulator: inout Simulator, radios: [AsyncStream<AgentPipeline.Input>.Continuation], clock: ScaledClock,
        truth: LineWriter?, steering: Steering? = nil, until stopped: StopCount, progress: (Double) -> Void
    ) async throws {
        var addresses = AdvertAddresses()
        let start = simulator.configuration.startTime
        var steering = steering
        // An agent that stopped (a signal, or the broker refused it) ends the simulation for all.
        while stopped.count.load(ordering: .relaxed) == 0 {
            steering?.steer(&simulator)
            guard let window = simulator.nextWindow() else { break }
            let wait = clock.realSeconds(until: window.end)
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            for (agentIndex, heard) in window.adverts.enumerated() where agentIndex < radios.count {
                let events = heard.flatMap { advert in
                    addresses.events(for: advert).map { HeardEvent(bytes: $0, time: advert.time) }
                }
                if !events.isEmpty { radios[agentIndex].yield(.events(events, framing: .bare)) }
                radios[agentIndex].yield(.replayTime(window.end))
            }
            if let truth { for record in window.truth { try truth.write(JSONLines.line(record)) } }
            progress((window.end - start) / simulator.configuration.duration)
        }
    }

    /// The agents' results added up; throws, in agent order, for the first that failed or never connected.
    static func outcome(of results: [AgentResult], broker: BrokerSettings) throws -> Outcome {
        let logger = Logger(label: "whereabouts sim", level: .warning)
        var outcome = Outcome()
        for result in results.sorted(by: { $0.agent.rawValue < $1.agent.rawValue }) {
            outcome.batches += result.batches
            outcome.adverts += result.adverts
            if let failure = result.failure { throw RuntimeError("simulated agent \(result.agent): \(failure)") }
            if result.connections == 0 {
                logger.error("simulated agent \(result.agent): \(result.summary)")
                throw RuntimeError("simulated agent \(result.agent) never reached the broker at \(broker.address)")
            }
        }
        return outcome
    }

    /// A steered tag and the waypoints that come for it at run time (`sim --survey-tag ID --waypoints PATH`): lines
    /// `x y [floor]`, each sending the tag there at a walking speed to stand until the next.
    struct Steering {
        var tag: TagIdentity
        var waypoints: LineFeed.LineQueue
        /// The floor of the last line that named one (the map's first to begin with).
        var floor: UInt16

        /// Sends the tag to the waypoints that came since the last window (the last of them wins).
        mutating func steer(_ simulator: inout Simulator) {
            for line in waypoints.take() {
                guard let numbers = LineFeed.numbers(line), numbers.count == 2 || numbers.count == 3,
                    numbers.count == 2 || UInt16(exactly: numbers[2]) != nil
                else {
                    printError("sim: not a waypoint (\"x y\" or \"x y floor\"): \(line)")
                    continue
                }
                if numbers.count == 3, let major = UInt16(exactly: numbers[2]) { floor = major }
                let point = Point(x: numbers[0], y: numbers[1])
                if !simulator.steer(tag, to: point, floor: floor) {
                    printError("sim: cannot send \(tag) to (\(line)): no such floor, or no stairs lead there")
                }
            }
        }
    }

    /// How many agents have stopped, shared between their tasks and the driver.
    final class StopCount: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Writes each simulated advert as the HCI advertising report a controller would deliver, from one random static
    /// address per tag; every ``telemetryEvery``-th advert of a tag is preceded by an Eddystone-TLM report from the
    /// same address, with a battery voltage fixed per tag (2700-3199 mV), as a real tag interleaves its frames.
    struct AdvertAddresses {
        static let telemetryEvery = 5
        private var addresses: [TagIdentity: DeviceAddress] = [:]
        private var adverts: [TagIdentity: Int] = [:]

        mutating func events(for advert: SimulatedAdvert) -> [[UInt8]] {
            guard case .iBeacon(let uuid, let major, let minor) = advert.tag else { return [] }
            // Random static addresses have their two top bits set; the rest comes from the identity.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in advert.tag.description.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
            let address: DeviceAddress
            if let known = addresses[advert.tag] {
                address = known
            } else {
                guard let made = DeviceAddress(value: 0xC000_0000_0000 | (hash & 0x3FFF_FFFF_FFFF)) else { return [] }
                addresses[advert.tag] = made
                address = made
            }
            let power = Int8(clamping: advert.power ?? -59)
            let beacon = IBeaconAdvertisement(uuid: uuid, major: major, minor: minor, measuredPower: power)
            let rssi = Int8(clamping: advert.rssi)
            var frames: [[UInt8]] = []
            let count = adverts[advert.tag, default: 0]
            adverts[advert.tag] = count + 1
            if count % Self.telemetryEvery == 0 {
                let millivolts = UInt16(2700 + hash % 500)
                // Eddystone service data: AA FE, TLM version 0, battery (big-endian), 20.0 °C, two counters.
                frames.append(
                    [0x03, 0x03, 0xAA, 0xFE, 0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00]
                        + [UInt8(millivolts >> 8), UInt8(millivolts & 0xFF), 0x14, 0x00]
                        + [UInt8](repeating: 0, count: 8))
            }
            frames.append(beacon.advertisingData)
            return frames.compactMap {
                AdvertisingReportEvent.legacy(address: address, addressType: .randomDevice, data: $0, rssi: rssi)
            }
        }
    }
}
