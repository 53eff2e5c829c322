import CommandLineSupport
import Synchronization
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsSimulation
import WhereaboutsWire

/// Publishes a simulation to a broker as the map's agents would: one MQTT connection per agent, its status
/// retained with a last will, and one QoS 1 reading batch per window, in (scaled) real time.
enum SimulatedAgents {
    /// One simulated agent's connection.
    final class Connection: Sendable {
        let agent: AgentID
        let client: MQTTClient
        let topics: Topics
        let connected = Atomic<Bool>(false)
        let pending = Mutex<[[UInt8]]>([])

        init(agent: AgentID, topics: Topics, broker: BrokerSettings) throws {
            self.agent = agent
            self.topics = topics
            let status = topics.agentStatus(agent: agent).name
            var settings = broker
            if settings.username == nil || settings.username == "simulator" { settings.username = agent.rawValue }
            client = try MQTTClient(
                MQTTClientConfiguration(
                    broker: settings,
                    clientID: "whereabouts-sim-\(agent)",
                    keepAlive: .seconds(15),
                    will: MQTTWill(topic: status, payload: Array("offline".utf8), qos: .atLeastOnce, retain: true)
                )
            )
        }

        func run() async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await self.client.run() }
                for await event in client.events {
                    switch event {
                    case .connected:
                        connected.store(true, ordering: .relaxed)
                        _ = try? client.publish(
                            topic: topics.agentStatus(agent: agent).name,
                            payload: Array("online".utf8),
                            qos: .atLeastOnce,
                            retain: true
                        )
                        flush()
                    case .disconnected:
                        connected.store(false, ordering: .relaxed)
                    default:
                        break
                    }
                }
            }
        }

        /// Publishes a batch, or keeps it (in order) until the broker is back, as a real agent does.
        func send(_ payload: [UInt8]) {
            pending.withLock { $0.append(payload) }
            flush()
        }

        func flush() {
            pending.withLock { queue in
                while let next = queue.first {
                    do {
                        _ = try client.publish(
                            topic: topics.readings(agent: agent).name, payload: next, qos: .atLeastOnce)
                        queue.removeFirst()
                    } catch {
                        return
                    }
                }
            }
        }

        func goodbye() {
            _ = try? client.publish(
                topic: topics.agentStatus(agent: agent).name,
                payload: Array("offline".utf8),
                qos: .atLeastOnce,
                retain: true
            )
        }
    }

    /// Runs the simulation through the broker; returns the number of batches and readings published.
    static func run(
        simulator: inout Simulator,
        broker: BrokerSettings,
        clock: ScaledClock,
        truth: LineWriter?,
        progress: (Double) -> Void
    ) async throws -> (batches: Int, readings: Int) {
        let map = simulator.map
        let topics = Topics(site: map.site.uuid)
        var connections: [Connection] = []
        for agent in map.agents {
            guard let id = AgentID(agent.id) else { continue }
            connections.append(try Connection(agent: id, topics: topics, broker: broker))
        }
        let epoch = Int(clock.origin * 1000)
        var sequences = Array(repeating: 0, count: connections.count)
        var batchCount = 0
        var readingCount = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.run() } }
            let deadline = WallClock.monotonic() + 30
            while connections.contains(where: { !$0.connected.load(ordering: .relaxed) }) {
                guard WallClock.monotonic() < deadline else {
                    throw RuntimeError("the simulated agents could not connect to \(broker.address)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let start = simulator.configuration.startTime
            while let window = simulator.nextWindow() {
                let wait = clock.realSeconds(until: window.end)
                if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
                for batch in window.batches where batch.agentIndex < connections.count {
                    let connection = connections[batch.agentIndex]
                    let sequence = sequences[batch.agentIndex]
                    sequences[batch.agentIndex] += 1
                    let payload = ReadingBatch(
                        agent: batch.agent,
                        epoch: epoch,
                        seq: sequence,
                        sent: window.end,
                        readings: batch.readings
                    ).payload
                    connection.send(Array(payload.utf8))
                    batchCount += 1
                    readingCount += batch.readings.count
                }
                if let truth { for record in window.truth { try truth.write(JSONLines.line(record)) } }
                progress((window.end - start) / simulator.configuration.duration)
            }
            truth?.flush()
            // Let the last batches go out, then say goodbye and disconnect.
            try await Task.sleep(for: .milliseconds(500))
            for connection in connections {
                connection.flush()
                connection.goodbye()
            }
            try await Task.sleep(for: .milliseconds(300))
            for connection in connections { connection.client.disconnect() }
            try await group.waitForAll()
        }
        return (batchCount, readingCount)
    }
}
