import CommandLineSupport
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

/// The jobs of one `whereabouts tag` run, on a connected client: find each tag's agent, send the job, wait for its
/// result, print it.
struct TagJobs {
    let plan: TagCommand.Plan
    let topics: Topics
    let client: MQTTClient
    let inbox: TagInbox

    /// How long past a job's deadline the tool waits for its result: the agent answers every job by its deadline,
    /// and the broker carries the answer in well under this.
    static let margin = 10.0

    func run() async throws -> ExitStatus {
        try await subscribe(topics.allGATTResults.filter)
        let targets = try await self.targets()
        if targets.isEmpty {
            printError(
                plan.tag.map { "whereabouts: no agent hears \($0): the locator has no retained position naming one" }
                    ?? "whereabouts: no tag has a retained position naming an agent")
            return .failure
        }
        let start = WallClock.monotonic()
        var failures = 0
        for (index, target) in targets.enumerated() {
            if plan.spread > 0, targets.count > 1 {
                let due = start + plan.spread * Double(index) / Double(targets.count)
                let wait = due - WallClock.monotonic()
                if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            }
            let line = try await job(index: index, tag: target.tag, agent: target.agent)
            let prefix = plan.tag == nil ? "\(target.tag): " : ""
            switch line {
            case .success(let text): print(prefix + text)
            case .failure(let error):
                printError("whereabouts: \(prefix)\(error.message)")
                failures += 1
            }
        }
        return failures == 0 ? .success : .failure
    }

    /// Subscribes and waits for the broker's acknowledgement, so that nothing sent after is missed.
    private func subscribe(_ filter: String) async throws {
        let before = inbox.subscriptionCount
        _ = try client.subscribe(filter, qos: .atLeastOnce)
        guard try await inbox.wait(for: 10, until: { $0.subscriptions > before ? true : nil }) != nil else {
            throw RuntimeError("the broker did not acknowledge the subscription to \(filter)")
        }
    }

    /// The tags to ask about and the agent to ask, from `--agent` or the locator's retained positions.
    private func targets() async throws -> [(tag: TagIdentity, agent: AgentID)] {
        if let tag = plan.tag, let agent = plan.agent { return [(tag, agent)] }
        let filter = plan.tag.map { topics.position(tag: $0).name } ?? topics.allPositions.filter
        try await subscribe(filter)
        // Retained messages follow the subscription's acknowledgement at once; a second is plenty for them.
        if let tag = plan.tag {
            _ = try await inbox.wait(for: 2) {
                $0.positions.contains { $0.topic == topics.position(tag: tag).name } ? true : nil
            }
        } else {
            try await Task.sleep(for: .seconds(1))
        }
        // Live positions keep coming: nothing more is wanted of them.
        _ = try? client.unsubscribe(filter)
        var nearest: [TagIdentity: AgentID] = [:]
        for message in inbox.takePositions() where !message.payload.isEmpty {
            guard let position = try? TagPosition(payload: String(decoding: message.payload, as: UTF8.self)),
                plan.tag == nil || position.tag == plan.tag,
                let agent = plan.agent ?? position.nearest?.agent
            else { continue }
            nearest[position.tag] = agent
        }
        return nearest.sorted { $0.key.description < $1.key.description }.map { ($0.key, $0.value) }
    }

    /// Sends one job and waits for its result; the printed line, or why it failed.
    private func job(index: Int, tag: TagIdentity, agent: AgentID) async throws -> Result<String, TagJobFailure> {
        guard let id = GATTJobID("tag-\(Int(WallClock.now() * 1000))-\(index)") else {
            throw RuntimeError("cannot make a job id")
        }
        let request = GATTJobRequest(id: id, tag: tag, address: nil, operation: plan.operation, deadline: plan.deadline)
        inbox.expectResult(of: id)
        defer { inbox.forget(id) }
        let messageID = try client.publish(
            topic: topics.gattRequests(agent: agent).name, payload: Array(request.payload.utf8), qos: .atLeastOnce)
        let acknowledgement = try await inbox.wait(for: 10) { $0.acknowledged[messageID] }
        if let acknowledgement, acknowledgement.isFailure {
            return .failure(
                TagJobFailure(
                    "the broker refused the job to agent \(agent): \(acknowledgement) (is this the operator account?)"))
        }
        let resultsTopic = topics.gattResults(agent: agent).name
        let result = try await inbox.wait(for: plan.deadline + Self.margin) { contents -> GATTJobResult? in
            guard let answer = contents.results[id], answer.topic == resultsTopic else { return nil }
            return answer.result
        }
        guard let result else {
            return .failure(
                TagJobFailure(
                    "no answer from agent \(agent) within \(plan.deadline + Self.margin) s (does it run with --gatt?)"))
        }
        let text = Self.describe(result)
        return result.status == .ok
            ? .success("\(text) (agent \(agent))") : .failure(TagJobFailure("\(text) (agent \(agent))"))
    }

    /// A result in plain words.
    static func describe(_ result: GATTJobResult) -> String {
        switch result.status {
        case .ok:
            let values = result.values ?? GATTJobValues()
            if let battery = values.battery { return "battery \(battery) %" }
            if let provisioned = values.provisioned {
                return
                    "provisioned, read back: uuid \(provisioned.uuid) major \(provisioned.major) minor \(provisioned.minor) power \(provisioned.power) dBm"
            }
            return
                "manufacturer \(values.manufacturer ?? "-"), model \(values.model ?? "-"), firmware \(values.firmware ?? "-")"
        case .notConnectable(let code?):
            return "the tag did not take a connection (HCI status \(hex(code)))"
        case .notConnectable(nil):
            return "the agent has not heard the tag lately: no address to connect to"
        case .timeout: return "no answer from the tag within the deadline"
        case .attError(let code, let handle, let uuid):
            return "the tag answered ATT error \(hex(code)) for attribute \(hex(handle))"
                + (uuid.map { " (\($0))" } ?? "")
        case .linkLost: return "the link to the tag was lost"
        case .busy: return "the agent is busy with other jobs; try later"
        case .refused(let reason): return "the agent refused the job: \(reason)"
        }
    }

    private static func hex<T: BinaryInteger>(_ value: T) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        let width = MemoryLayout<T>.size * 2
        return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Why one job failed, in words for the operator.
struct TagJobFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
