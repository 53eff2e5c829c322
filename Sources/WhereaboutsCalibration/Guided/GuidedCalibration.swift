public import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsMapFile
public import WhereaboutsWire

/// Guided calibration: fits every agent's RSSI offset and path-loss exponent, and every tag's measured power,
/// from a recording made while tags moved through the building at known positions.
///
/// Readings are grouped into samples of one ``window`` per (agent, tag): the mean RSSI of the window's adverts at
/// the tag's true position at the readings' mean time (``TruthTrack``). Only samples on the agent's own floor
/// count (floor slabs add losses the model lacks). The fit is ``PathLossRegression``: robust (Huber), bounded and
/// regularised toward the defaults (offsets toward 0 dB, exponents toward the map's, tag powers toward the map's
/// or the advertised power, or, for a tag that names none, loosely toward the map's default). The offsets and the
/// tag powers share one degree of freedom the data cannot see (raise every power and every offset by the same dB
/// and nothing changes); the priors settle it, so a tag with no known power takes nearly all of the common shift.
///
/// An agent with fewer than ``CalibrationSettings/minimumSamples`` samples, or whose samples span less than
/// ``CalibrationSettings/minimumDistanceSpread`` metres of distance, keeps its map values, and the result says why.
public struct GuidedCalibration: Sendable {
    /// What happened to the readings.
    public struct Statistics: Sendable, Hashable {
        /// Readings in the recording.
        public var readings = 0
        /// Readings from agents the map lacks.
        public var unknownAgents = 0
        /// Readings out of range (non-finite, RSSI outside −127…20, count below 1).
        public var invalid = 0
        /// Readings of a transmitter with no truth at the time (agents' beacons among them).
        public var withoutTruth = 0
        /// Readings of a tag on another floor than the agent.
        public var otherFloor = 0
        /// Readings that went into samples.
        public var used = 0
    }

    /// The map document as given (edited, never rewritten from scratch, when the result is written).
    public let document: JSONValue
    /// The map.
    public let map: FloorMap
    /// The settings.
    public let settings: CalibrationSettings
    /// The tags with samples, sorted.
    public let tags: [TransmitterPrior]
    /// The samples, in time order; their transmitters index ``tags``.
    public let samples: [PathLossObservation]
    /// The readings, in time order (for replays of held-out blocks).
    public let readings: [RecordedReading]
    /// The truth.
    public let truth: TruthTrack
    /// What happened to the readings.
    public let statistics: Statistics
    /// Seconds of readings per sample and (agent, tag).
    public let window: Double

    /// Prepares a calibration.
    ///
    /// - Parameters:
    ///   - document: the map document (parsed JSON); the result is written back into it.
    ///   - window: seconds per sample; single adverts within a window are averaged first.
    ///   - maximumTruthGap: truth is not interpolated across gaps longer than this (seconds).
    /// - Throws: ``CalibrationError/invalidMap(_:)``, or ``CalibrationError/noSamples(_:)`` when nothing is usable.
    public init(
        document: JSONValue,
        readings: [RecordedReading],
        truth: [TruthRecord],
        settings: CalibrationSettings = CalibrationSettings(),
        window: Double = 1,
        maximumTruthGap: Double = 5
    ) throws(CalibrationError) {
        let map: FloorMap
        switch FloorMap.load(document) {
        case .success(let loaded): map = loaded
        case .failure(let problems): throw .invalidMap(problems)
        }
        self.document = document
        self.map = map
        self.settings = settings
        self.window = window.isFinite ? min(max(window, 0.1), 60) : 1
        self.truth = TruthTrack(truth, maximumGap: maximumTruthGap)
        self.readings = readings.enumerated().filter { $0.element.time.isFinite }
            .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)

        var statistics = Statistics()
        statistics.readings = readings.count
        let buckets = Self.bucket(self.readings, map: map, truth: self.truth, window: self.window, into: &statistics)
        let tagIdentities = Set(buckets.windows.keys.map(\.tag)).sorted()
        tags = tagIdentities.map { identity in
            TransmitterPrior(identity: identity, advertised: buckets.advertised[identity], map: map, settings: settings)
        }
        let samples = Self.samples(
            buckets.windows, tags: tagIdentities, map: map, truth: self.truth, settings: settings)
        self.samples = samples
        self.statistics = statistics
        guard !samples.isEmpty else {
            throw .noSamples(
                "\(statistics.readings) readings: \(statistics.withoutTruth) of tags without truth at the time, "
                    + "\(statistics.otherFloor) from another floor, \(statistics.unknownAgents) from unknown agents, "
                    + "\(statistics.invalid) invalid")
        }
    }

    /// Sorts the readings into one bucket per (agent, tag, window) of those that can be used (a known agent, a
    /// valid reading, truth at the time, on the agent's floor), counting the others by why not; notes each tag's
    /// advertised power as it goes.
    private static func bucket(
        _ readings: [RecordedReading], map: FloorMap, truth: TruthTrack, window: Double,
        into statistics: inout Statistics
    ) -> (windows: [BucketKey: Bucket], advertised: [TagIdentity: Double]) {
        var buckets: [BucketKey: Bucket] = [:]
        var advertised: [TagIdentity: Double] = [:]
        for reading in readings {
            guard let agentIndex = map.agentIndex(of: reading.agent.rawValue) else {
                statistics.unknownAgents += 1
                continue
            }
            guard reading.rssi.isFinite, reading.rssi >= -127, reading.rssi <= 20, reading.count >= 1,
                reading.variance.map({ $0.isFinite && $0 >= 0 }) ?? true
            else {
                statistics.invalid += 1
                continue
            }
            let agent = map.agents[agentIndex]
            guard let position = truth.position(of: reading.tag, at: reading.time) else {
                statistics.withoutTruth += 1
                continue
            }
            guard position.floor == agent.floor else {
                statistics.otherFloor += 1
                continue
            }
            statistics.used += 1
            if let power = reading.power { advertised[reading.tag] = Double(power) }
            let key = BucketKey(
                agent: agentIndex, tag: reading.tag, window: Int64((reading.time / window).rounded(.down)))
            buckets[key, default: Bucket()].add(reading)
        }
        return (buckets, advertised)
    }

    /// One sample per bucket, in time order: the window's mean RSSI at the distance from the agent's antenna to the
    /// tag's true position at the readings' mean time. `tags` are the sorted identities the samples index.
    private static func samples(
        _ buckets: [BucketKey: Bucket], tags: [TagIdentity], map: FloorMap, truth: TruthTrack,
        settings: CalibrationSettings
    ) -> [PathLossObservation] {
        let floorHeights = Dictionary(map.floors.map { ($0.major, $0.height) }, uniquingKeysWith: { a, _ in a })
        let tagIndex = Dictionary(tags.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        var samples: [PathLossObservation] = []
        samples.reserveCapacity(buckets.count)
        for (key, bucket) in buckets {
            let time = bucket.timeSum / Double(bucket.readings)
            guard let position = truth.position(of: key.tag, at: time), let index = tagIndex[key.tag] else {
                continue
            }
            let agent = map.agents[key.agent]
            let floorHeight = floorHeights[agent.floor] ?? 0
            let dx = position.point.x - agent.position.x
            let dy = position.point.y - agent.position.y
            let dz = (floorHeight + map.model.tagHeight) - (floorHeight + agent.height)
            let distance = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
            samples.append(
                PathLossObservation(
                    transmitter: index,
                    receiver: key.agent,
                    distance: distance,
                    rssi: bucket.mean,
                    variance: settings.modelSigma * settings.modelSigma
                        + bucket.varianceOfMean(advertVariance: settings.advertVariance),
                    time: time,
                    position: position.point
                ))
        }
        samples.sort { ($0.time, $0.receiver, $0.transmitter) < ($1.time, $1.receiver, $1.transmitter) }
        return samples
    }

    /// The constants in force in the map, per agent.
    public var mapConstants: [AgentConstants] { map.agents.map { AgentConstants($0, in: map) } }

    /// Fits on every sample, or on those outside `heldOut` (a time range left out for validation).
    public func fit(holdingOut heldOut: Range<Double>? = nil) -> CalibrationResult {
        fit(training: heldOut.map { range in samples.filter { !range.contains($0.time) } } ?? samples)
    }

    /// Fits on some of the samples, with priors as strong as their coverage of the floor calls for
    /// (``CalibrationSettings/coverageFactor(_:)``) and samples from one place sharing that place's weight
    /// (``CalibrationSettings/samplesPerPlace``).
    public func fit(training: [PathLossObservation]) -> CalibrationResult {
        let coverage = self.coverage(of: training)
        let agentScales = map.agents.map { settings.coverageFactor(coverage.share(ofFloor: $0.floor)) }
        var scaleSums = [Double](repeating: 0, count: tags.count)
        var scaleCounts = [Double](repeating: 0, count: tags.count)
        for sample in training where tags.indices.contains(sample.transmitter) {
            scaleSums[sample.transmitter] += agentScales[sample.receiver]
            scaleCounts[sample.transmitter] += 1
        }
        var fitter = ConstantsFitter(
            map: map, settings: settings, inForce: mapConstants, transmitters: tags, fitsPowers: true,
            minimumSamples: settings.minimumSamples)
        fitter.agentPriorScales = agentScales
        fitter.powerPriorScales = tags.indices.map { scaleCounts[$0] > 0 ? scaleSums[$0] / scaleCounts[$0] : 1 }
        return fitter.fit(placeWeighted(training))
    }

    /// How much of each floor some samples cover (their true positions).
    public func coverage(of samples: [PathLossObservation]) -> SurveyCoverage {
        var positions: [(floor: UInt16, point: Point)] = []
        var seen = Set<Point>()
        for sample in samples {
            guard let point = sample.position, seen.insert(point).inserted else { continue }
            positions.append((map.agents[sample.receiver].floor, point))
        }
        return SurveyCoverage(map: map, positions: positions, radius: settings.coverageRadius)
    }

    /// The samples with each agent's samples from one place beyond ``CalibrationSettings/samplesPerPlace``
    /// sharing the weight: their variances grow by `count / samplesPerPlace`.
    func placeWeighted(_ training: [PathLossObservation]) -> [PathLossObservation] {
        guard settings.samplesPerPlace > 0, settings.placeSize > 0 else { return training }
        func place(_ sample: PathLossObservation) -> SIMD3<Int64>? {
            guard let point = sample.position, point.x.isFinite, point.y.isFinite else { return nil }
            return SIMD3(
                Int64(sample.receiver), Int64((point.x / settings.placeSize).rounded(.down)),
                Int64((point.y / settings.placeSize).rounded(.down)))
        }
        var counts: [SIMD3<Int64>: Int] = [:]
        for sample in training { if let key = place(sample) { counts[key, default: 0] += 1 } }
        return training.map { sample in
            guard let key = place(sample), let count = counts[key], count > settings.samplesPerPlace else {
                return sample
            }
            var weighted = sample
            weighted.variance *= Double(count) / Double(settings.samplesPerPlace)
            return weighted
        }
    }

    /// Fits on every sample and checks that the fit is worth writing.
    ///
    /// - Throws: ``CalibrationError/nothingToFit(_:)`` when no agent could be fitted, naming each and why.
    public func calibrate() throws(CalibrationError) -> CalibrationResult {
        let result = fit()
        guard result.agents.contains(where: \.isFitted) else {
            throw .nothingToFit(result.agents.map { "agent \($0.id): \($0.refusal?.description ?? "fitted")" })
        }
        return result
    }

    // MARK: - Validation

    /// Errors on held-out time blocks, before and after.
    public struct HeldOutReport: Sendable, Hashable {
        /// How many blocks.
        public var folds: Int
        /// Positioning error of the engine replayed on the held-out blocks with the map's constants.
        public var positionBefore: ErrorSummary?
        /// … and with the constants fitted on the other blocks.
        public var positionAfter: ErrorSummary?
        /// RMS of the held-out samples' RSSI residuals with the map's constants, dB.
        public var residualBefore: Double?
        /// … and with the constants fitted on the other blocks.
        public var residualAfter: Double?
        /// Positioning error with the fitted constants and a radio map learned on the other blocks.
        public var positionWithRadioMap: ErrorSummary?
        /// RMS of the held-out residuals against the fitted trend plus that radio map, dB.
        public var residualWithRadioMap: Double?
    }

    /// K-fold validation by time blocks: the samples, in time order, are cut into `folds` blocks of equal size;
    /// each block is held out in turn, the constants are fitted on the rest, and the block is scored with the
    /// map's constants and the fitted ones: RSSI residuals, and (with `replay`) the engine's positioning error.
    ///
    /// - Parameter replay: runs the engine over readings on a map and returns the positions it published
    ///   (`LocatorReplay.run` in WhereaboutsLocator); nil skips the positioning error.
    public func crossValidate(
        folds requested: Int = 5,
        replay: ((FloorMap, [RecordedReading]) -> [PositionRecord])? = nil
    ) -> HeldOutReport {
        let folds = max(2, min(requested, samples.count))
        var residualsBefore: [Double] = []
        var residualsAfter: [Double] = []
        var residualsMapped: [Double] = []
        var errorsBefore: [Double] = []
        var errorsAfter: [Double] = []
        var errorsMapped: [Double] = []
        let inForce = mapConstants
        for fold in 0..<folds {
            let start = fold == 0 ? -Double.infinity : samples[fold * samples.count / folds].time
            let end = fold == folds - 1 ? Double.infinity : samples[(fold + 1) * samples.count / folds].time
            guard start < end else { continue }
            let block = start..<end
            let result = fit(holdingOut: block)
            let powers = result.fittedPowers
            for sample in samples where block.contains(sample.time) {
                let agent = sample.receiver
                let tag = tags[sample.transmitter]
                let old = inForce[agent]
                let new = result.agents[agent].after
                residualsBefore.append(
                    sample.rssi
                        - expectedRawRSSI(
                            power: tag.inForce, offset: old.rssiOffset, exponent: old.pathLossExponent,
                            distance: sample.distance))
                residualsAfter.append(
                    sample.rssi
                        - expectedRawRSSI(
                            power: powers[tag.identity] ?? tag.inForce, offset: new.rssiOffset,
                            exponent: new.pathLossExponent, distance: sample.distance))
            }
            let radioMap = (try? self.radioMap(result, holdingOut: block)) ?? [:]
            guard let calibrated = try? calibratedMap(result) else { continue }
            // In agent order: a dictionary's order changes from process to process, and with it the sum's last bits.
            let byAgent = residuals(on: calibrated, powers: powers, keeping: block.contains).sorted { $0.key < $1.key }
            for (agentIndex, held) in byAgent {
                let surface = radioMap[calibrated.agents[agentIndex].id]
                residualsMapped += held.map { $0.residual - (surface?.residual(at: $0.point).mean ?? 0) }
            }
            guard let replay else { continue }
            let blockReadings = readings.filter { block.contains($0.time) }
            guard !blockReadings.isEmpty else { continue }
            errorsBefore += positionErrors(replay(map, blockReadings))
            errorsAfter += positionErrors(replay(calibrated, blockReadings))
            if !radioMap.isEmpty, let mapped = try? calibratedMap(result, radioMap: radioMap) {
                errorsMapped += positionErrors(replay(mapped, blockReadings))
            }
        }
        return HeldOutReport(
            folds: folds,
            positionBefore: ErrorSummary(errorsBefore),
            positionAfter: ErrorSummary(errorsAfter),
            residualBefore: rootMeanSquare(residualsBefore),
            residualAfter: rootMeanSquare(residualsAfter),
            positionWithRadioMap: ErrorSummary(errorsMapped),
            residualWithRadioMap: rootMeanSquare(residualsMapped)
        )
    }

    /// The horizontal errors of positions against the truth (positions without truth are skipped).
    public func positionErrors(_ positions: [PositionRecord]) -> [Double] {
        positions.compactMap { position in
            truth.position(of: position.tag, at: position.time).map {
                Point(x: position.x, y: position.y).distance(to: $0.point)
            }
        }
    }

    /// The map document with a result written into it, and a radio map when one is given.
    public func calibratedDocument(
        _ result: CalibrationResult,
        tagPowers: Bool = true,
        radioMap: [String: RadioSurface] = [:]
    ) -> JSONValue {
        MapDocument.apply(
            agents: result.fittedAgents, powers: tagPowers ? result.fittedPowers : [:], radioMaps: radioMap,
            to: document)
    }

    /// The map with a result applied, loaded from ``calibratedDocument(_:tagPowers:radioMap:)``.
    public func calibratedMap(
        _ result: CalibrationResult,
        tagPowers: Bool = true,
        radioMap: [String: RadioSurface] = [:]
    ) throws(CalibrationError) -> FloorMap {
        switch FloorMap.load(calibratedDocument(result, tagPowers: tagPowers, radioMap: radioMap)) {
        case .success(let loaded): return loaded
        case .failure(let problems): throw .editedMapInvalid(problems)
        }
    }

    // MARK: - Radio map

    /// The survey's residuals per agent against the trend of `map` (its offsets, exponents, walls and tag powers):
    /// the raw RSSI plus the agent's offset, less the tag's power at 1 m and the path gain to where the tag stood.
    /// Only the samples whose time `keeping` accepts count.
    public func residuals(
        on map: FloorMap, powers: [TagIdentity: Double], keeping: (Double) -> Bool = { _ in true }
    ) -> [Int: [ResidualSample]] {
        residuals(on: map, powers: powers, keepingSample: { keeping(samples[$0].time) })
    }

    /// The same, for the samples (by index in ``samples``) that `keepingSample` accepts.
    public func residuals(
        on map: FloorMap, powers: [TagIdentity: Double], keepingSample: (Int) -> Bool
    ) -> [Int: [ResidualSample]] {
        let wallsByFloor = Dictionary(grouping: map.walls, by: \.floor)
        var result: [Int: [ResidualSample]] = [:]
        for (index, sample) in samples.enumerated() {
            guard let position = sample.position, keepingSample(index) else { continue }
            let agent = map.agents[sample.receiver]
            let tag = tags[sample.transmitter].identity
            let power = map.knownTag(tag)?.measuredPower ?? powers[tag] ?? tags[sample.transmitter].inForce
            let exponent = agent.pathLossExponent ?? map.model.pathLossExponent
            let gain = pathGain(
                from: agent.position, heightAboveTag: agent.height - map.model.tagHeight, exponent: exponent,
                walls: wallsByFloor[agent.floor] ?? [], to: position)
            let residual = sample.rssi + agent.rssiOffset - power - gain
            result[sample.receiver, default: []].append(ResidualSample(point: position, residual: residual))
        }
        return result
    }

    /// A radio map learned from the survey on top of a result's constants: per agent, a ``RadioSurface`` over
    /// its floor (agents the survey covers too little get none, and keep the path-loss model alone).
    ///
    /// - Parameters:
    ///   - holdingOut: samples in this time range are left out (for validation).
    ///   - cellSize: the raster's cell, in metres.
    public func radioMap(
        _ result: CalibrationResult,
        holdingOut heldOut: Range<Double>? = nil,
        cellSize: Double = 0.5,
        fit: ResidualSurfaceFit = ResidualSurfaceFit()
    ) throws(CalibrationError) -> [String: RadioSurface] {
        try radioMap(
            result, trainingOn: { !(heldOut?.contains(samples[$0].time) ?? false) }, cellSize: cellSize, fit: fit)
    }

    /// The same, learned from the samples (by index in ``samples``) that `trainingOn` accepts.
    public func radioMap(
        _ result: CalibrationResult,
        trainingOn: (Int) -> Bool,
        cellSize: Double = 0.5,
        fit: ResidualSurfaceFit = ResidualSurfaceFit()
    ) throws(CalibrationError) -> [String: RadioSurface] {
        let calibrated = try calibratedMap(result)
        let residuals = self.residuals(on: calibrated, powers: result.fittedPowers, keepingSample: trainingOn)
        var surfaces: [String: RadioSurface] = [:]
        for (agentIndex, agentResiduals) in residuals {
            let agent = calibrated.agents[agentIndex]
            guard let floor = calibrated.floors.first(where: { $0.major == agent.floor }) else { continue }
            if let surface = fit.fit(agentResiduals, bounds: floor.outline.bounds, cellSize: cellSize) {
                surfaces[agent.id] = surface
            }
        }
        return surfaces
    }
}

private struct BucketKey: Hashable {
    var agent: Int
    var tag: TagIdentity
    var window: Int64
}

/// The adverts of one (agent, tag, window): their count, sum and sum of squares, pooled from the readings.
private struct Bucket {
    var readings = 0
    var adverts = 0.0
    var sum = 0.0
    var squares = 0.0
    var timeSum = 0.0
    var spreadKnown = false

    mutating func add(_ reading: RecordedReading) {
        let count = Double(reading.count)
        readings += 1
        adverts += count
        sum += count * reading.rssi
        // A reading's own variance covers its adverts' spread around its mean.
        squares += count * reading.rssi * reading.rssi + (count - 1) * (reading.variance ?? 0)
        if reading.variance != nil { spreadKnown = true }
        timeSum += reading.time
    }

    var mean: Double { sum / adverts }

    /// The variance of the window's mean: the adverts' spread (pooled, or assumed) over their count.
    func varianceOfMean(advertVariance: Double) -> Double {
        guard adverts >= 2, spreadKnown || readings >= 2 else { return advertVariance / adverts }
        let spread = max((squares - adverts * mean * mean) / (adverts - 1), 1)
        return spread / adverts
    }
}
