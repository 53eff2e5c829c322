public import WhereaboutsAdvertising
import WhereaboutsCore
public import WhereaboutsSession
public import WhereaboutsWire

/// A GATT job as the radio runs it: the request, the address to connect to and the seconds left of its deadline.
public struct GATTJob: Sendable, Hashable {
    public var request: GATTJobRequest
    public var address: DeviceAddress
    public var addressType: AddressType
    /// Seconds, from when the job starts.
    public var remaining: Double

    public init(request: GATTJobRequest, address: DeviceAddress, addressType: AddressType, remaining: Double) {
        self.request = request
        self.address = address
        self.addressType = addressType
        self.remaining = remaining
    }
}

/// The agent's GATT jobs between the broker and the radio: requests from the agent's requests topic go to the
/// ``GATTJobQueue``; a started job gets the address to connect to (the request's own, or the one its tag was last
/// heard from) and goes to the radio as an effect; every result goes out on the agent's results topic.
///
/// A job that names only a tag the agent has not heard (since it started, among the last ``trackedTags`` tags) ends
/// at once as `notConnectable` with no code: there is nothing to connect to.
public struct GATTJobDesk: Sendable {
    /// Tags whose last address is kept, at most; the one heard longest ago goes first.
    public static let trackedTags = 4096

    private var queue: GATTJobQueue
    private let requests: Topic
    private let results: Topic
    private var addresses: [TagIdentity: (address: DeviceAddress, type: AddressType, serial: Int)] = [:]
    private var serial = 0

    /// A desk for `agent`'s topics; `capacity` jobs may wait behind the running one.
    public init(agent: AgentID, topics: Topics, capacity: Int = 8) {
        queue = GATTJobQueue(capacity: capacity)
        requests = topics.gattRequests(agent: agent)
        results = topics.gattResults(agent: agent)
    }

    /// The agent's requests topic, at QoS 1: a job must not be lost on the way.
    public var subscription: Subscription { Subscription(filter: TopicFilter(exactly: requests), qos: .atLeastOnce) }
    /// What the queue counted.
    public var counters: GATTJobQueue.Counters { queue.counters }

    /// Remembers where a tag was last heard from.
    public mutating func heard(_ sighting: BeaconSighting) {
        serial += 1
        if addresses[sighting.tag] == nil, addresses.count >= Self.trackedTags,
            let oldest = addresses.min(by: { $0.value.serial < $1.value.serial })?.key
        {
            addresses[oldest] = nil
        }
        addresses[sighting.tag] = (sighting.address, sighting.addressType, serial)
    }

    /// A message on the requests topic; nil for any other topic.
    public mutating func receive(
        topic: String, payload: [UInt8], now: Double
    ) -> [ServiceAction<AgentPipeline.Effect>]? {
        guard topic == requests.name else { return nil }
        return perform(queue.receive(payload, now: now), now: now)
    }

    /// The radio ended a job (or stopped it after a cancel).
    public mutating func finished(_ result: GATTJobResult, now: Double) -> [ServiceAction<AgentPipeline.Effect>] {
        guard let id = result.id else { return [] }
        return perform(queue.finished(id, result, now: now), now: now)
    }

    /// Time passed: deadlines.
    public mutating func tick(now: Double) -> [ServiceAction<AgentPipeline.Effect>] {
        perform(queue.tick(now: now), now: now)
    }

    private mutating func perform(_ actions: [GATTJobQueue.Action], now: Double) -> [ServiceAction<
        AgentPipeline.Effect
    >] {
        var out: [ServiceAction<AgentPipeline.Effect>] = []
        var pending = actions
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .publish(let result):
                out.append(
                    .publish(Publication(topic: results, payload: result.payload, qos: .atLeastOnce, retain: false)))
                out.append(.log(.info, "GATT job \(result.id?.rawValue ?? "(no id)"): \(result.status.name)"))
            case .cancel(let id):
                out.append(.effect(.cancelGATTJob(id)))
            case .start(let request, let remaining):
                if let target = target(of: request) {
                    let job = GATTJob(request: request, address: target.0, addressType: target.1, remaining: remaining)
                    out.append(.effect(.runGATTJob(job)))
                } else {
                    // Nothing to connect to: the job ends here, and the next one may start.
                    let result = GATTJobResult(id: request.id, tag: request.tag, status: .notConnectable(code: nil))
                    pending += queue.finished(request.id, result, now: now)
                }
            }
        }
        return out
    }

    private func target(of request: GATTJobRequest) -> (DeviceAddress, AddressType)? {
        if let given = request.address {
            guard let address = DeviceAddress(value: given.address) else { return nil }
            return (address, given.isRandom ? .randomDevice : .publicDevice)
        }
        guard let tag = request.tag, let known = addresses[tag] else { return nil }
        return (known.address, known.type)
    }
}
