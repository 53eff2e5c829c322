import Synchronization
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsGATT
import WhereaboutsHCI
import WhereaboutsRuntime
import WhereaboutsWire

/// Runs the agent's GATT jobs, one at a time, on the scanning controller: connect, do the job's reads and writes,
/// disconnect, and say how it ended. The scan goes on meanwhile; the controller does both.
///
/// The queue (``GATTJobDesk``) decides what runs and keeps the deadlines; this only performs. A central is made
/// for each job on the controller open at the time (LiveScan may have opened it again since the last one), with its
/// ATT timeout cut to the job's deadline, so that a tag that goes silent mid-job ends it by itself soon after the
/// queue has answered `timeout`. A cancelled job stops at its next step.
final class GATTJobRunner: Sendable {
    private let jobs: AsyncStream<GATTJob>
    private let submissions: AsyncStream<GATTJob>.Continuation
    private let cancelled = Mutex<GATTJobID?>(nil)

    init() {
        (jobs, submissions) = AsyncStream.makeStream(of: GATTJob.self)
    }

    /// Queues a job (the desk sends one only when the last one has ended).
    func submit(_ job: GATTJob) { submissions.yield(job) }

    /// Asks the running job to stop at its next step.
    func cancel(_ id: GATTJobID) { cancelled.withLock { $0 = id } }

    /// Runs the jobs submitted, on the controller `host` gives at each job's start, until the task is cancelled;
    /// hands each end to `ended` as the pipeline's input, with what the job's link dropped.
    func run(host: @Sendable () -> HCIHost, ended: @Sendable (AgentPipeline.Input) -> Void) async {
        for await job in jobs {
            let end = await perform(job, on: host())
            // A later job may reuse the id: the cancel was for this one.
            cancelled.withLock { if $0 == job.request.id { $0 = nil } }
            ended(end)
        }
    }

    private func isCancelled(_ id: GATTJobID) -> Bool { cancelled.withLock { $0 == id } }

    /// One job, start to end, on a central of its own; every failure is a result. Its end carries what its
    /// central dropped: ACL packets going out, and what came in malformed or for no known connection or channel
    /// (the agent's counters line reports them; the job's result does not).
    func perform(_ job: GATTJob, on host: HCIHost) async -> AgentPipeline.Input {
        let central: GATTCentral
        do {
            central = try await GATTCentral(host: host, transactionTimeout: min(30, max(1, job.remaining)))
        } catch {
            return .gattJobEnded(GATTJobResult(id: job.request.id, tag: job.request.tag, status: .linkLost))
        }
        let result = await perform(job, with: central)
        return .gattJobEnded(result, droppedPackets: central.droppedPackets, linkDrops: central.counters)
    }

    private func perform(_ job: GATTJob, with central: GATTCentral) async -> GATTJobResult {
        let request = job.request
        func failed(_ status: GATTJobStatus) -> GATTJobResult {
            GATTJobResult(id: request.id, tag: request.tag, status: status)
        }
        let link: ConnectionComplete
        do {
            link = try await central.connect(
                to: job.address, type: job.addressType, timeout: .seconds(min(10, max(1, job.remaining))))
        } catch {
            return failed(Self.status(error, asking: nil))
        }
        let result: GATTJobResult
        do {
            let values = try await Steps(central: central, handle: link.handle, id: request.id, runner: self)
                .values(for: request.operation)
            result = GATTJobResult(id: request.id, tag: request.tag, status: .ok, values: values)
        } catch let error as Steps.Failure {
            result = failed(error.status)
        } catch {
            result = failed(.timeout)  // cancelled: the queue has answered `timeout` already
        }
        await central.disconnect(link.handle)
        return result
    }

    /// A central's error as a job's status; `uuid` is what was asked for, when the error does not name it.
    static func status(_ error: GATTCentralError, asking uuid: AttributeUUID?) -> GATTJobStatus {
        switch error {
        case .connectionFailed(let status, _): return .notConnectable(code: status)
        case .connectTimedOut: return .timeout
        case .controller: return .linkLost
        case .gatt(let gatt):
            switch gatt {
            case .attribute(let code, _, let handle, let named):
                return .attError(
                    code: code.rawValue, handle: handle, uuid: (named ?? uuid).map { "\($0)".lowercased() })
            case .timedOut: return .timeout
            case .linkLost: return .linkLost
            default: return .refused(reason: "\(gatt)")
            }
        }
    }

    /// The procedures of one job on one link.
    private struct Steps {
        let central: GATTCentral
        let handle: UInt16
        let id: GATTJobID
        let runner: GATTJobRunner

        struct Failure: Error {
            var status: GATTJobStatus
        }

        func values(for operation: GATTOperation) async throws -> GATTJobValues {
            switch operation {
            case .battery:
                guard let value = try await read(.batteryLevel), let level = value.first, level <= 100 else {
                    throw Failure(status: .refused(reason: "the tag's Battery Level (0x2a19) is not a percentage"))
                }
                return GATTJobValues(battery: Int(level))
            case .info:
                let texts = try await [AttributeUUID.manufacturerName, .modelNumber, .firmwareRevision].asyncMap {
                    try await read($0, optional: true).map(GATTJobValues.text)
                }
                return GATTJobValues(manufacturer: texts[0], model: texts[1], firmware: texts[2])
            case .provision(let wanted):
                return GATTJobValues(provisioned: try await provision(wanted))
            }
        }

        /// Writes the configuration characteristic and reads it back.
        private func provision(_ wanted: BeaconProvisioning) async throws -> BeaconProvisioning {
            let uuid = BeaconConfiguration.characteristic
            // The 21-byte value needs an MTU above the default 23 (a Write Request carries MTU - 3 bytes).
            _ = try await step(.exchangeMTU(247), uuid)
            guard
                case .values(let found) = try await step(.readByType(uuid, start: 1, end: 0xFFFF), uuid),
                let attribute = found.first
            else { throw Failure(status: .refused(reason: "the tag has no configuration characteristic (\(uuid))")) }
            let configuration = BeaconConfiguration(
                IBeaconAdvertisement(
                    uuid: wanted.uuid, major: wanted.major, minor: wanted.minor, measuredPower: wanted.power))
            _ = try await step(.write(attribute.handle, configuration.value), uuid)
            guard case .value(let bytes) = try await step(.read(attribute.handle), uuid),
                let back = BeaconConfiguration(value: bytes)?.advertisement
            else {
                throw Failure(
                    status: .refused(reason: "the configuration read back is not \(BeaconConfiguration.length) bytes"))
            }
            return BeaconProvisioning(uuid: back.uuid, major: back.major, minor: back.minor, power: back.measuredPower)
        }

        /// A characteristic's value by its UUID; nil when `optional` and the tag has none.
        private func read(_ uuid: AttributeUUID, optional: Bool = false) async throws -> [UInt8]? {
            do {
                guard case .values(let values) = try await step(.readByType(uuid, start: 1, end: 0xFFFF), uuid),
                    let first = values.first
                else { return nil }
                // Read By Type gives at most MTU - 4 bytes: read the whole value by its handle.
                guard case .value(let whole) = try await step(.read(first.handle), uuid) else { return first.value }
                return whole
            } catch let failure as Failure {
                if optional, case .attError(let code, _, _) = failure.status,
                    code == ATTErrorCode.attributeNotFound.rawValue
                {
                    return nil
                }
                throw failure
            }
        }

        private func step(_ procedure: GATTProcedure, _ uuid: AttributeUUID) async throws -> GATTResult {
            if runner.isCancelled(id) || Task.isCancelled { throw CancellationError() }
            do {
                return try await central.perform(procedure, on: handle)
            } catch {
                throw Failure(status: GATTJobRunner.status(error, asking: uuid))
            }
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}

extension LiveScan {
    /// The scan's inputs and the GATT jobs' ends in one feed: the scan forwards through a feed of its own, whose
    /// credits come back as the service takes its inputs, so back-pressure on the scan is what it was alone.
    func runWithJobs(firstStream: AsyncStream<[UInt8]>, into feed: inout SourceFeed<AgentPipeline.Input>) async {
        enum Merged: Sendable {
            case scan(AgentPipeline.Input)
            case scanEnded
        }
        let (merged, sink) = AsyncStream.makeStream(of: Merged.self)
        let (credits, creditSink) = AsyncStream.makeStream(of: Void.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var inner = SourceFeed(credits: credits) { sink.yield(.scan($0)) }
                await self.run(firstStream: firstStream, into: &inner)
                sink.yield(.scanEnded)
            }
            group.addTask {
                await self.gattJobs.run(host: { self.currentHost }) { sink.yield(.scan($0)) }
            }
            loop: for await item in merged {
                switch item {
                case .scan(let input):
                    guard await feed.send(input) else { break loop }
                    if case .gattJobEnded = input { continue }
                    creditSink.yield()
                case .scanEnded:
                    break loop
                }
            }
            creditSink.finish()
            group.cancelAll()
        }
    }
}
