import WhereaboutsCalibration
public import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsWire

/// How far a survey has come: the point or walk under way (for a progress ring), and per area of the floor the
/// samples the calibration's spatial check will count, with the areas that still lack them.
///
/// The areas and counts are the spatial check's own (``GuidedCalibration/surveyAreas()`` on the readings and truth
/// recorded so far, the point under way counted as if closed now): the survey's bounding box cut into about eight
/// blocks, each needing `max(30, 3 % of the samples)` to be held out. They move as the survey grows (the box grows
/// with it), as they will in the report.
public struct SurveyProgress: Sendable, Equatable {
    /// What the operator is doing.
    public enum Phase: String, Sendable {
        case notStarted = "not_started"
        case idle
        case standing
        case walking
    }

    /// The point or walk under way, or the last one.
    public struct Place: Sendable, Equatable {
        /// Whether it is a reference point (else a walk).
        public var isPoint: Bool
        public var floor: UInt16
        /// The point, or where the walker is.
        public var position: Point
        /// 0…1: the dwell or the route done.
        public var progress: Double
        /// Readings of the survey tag since it began (points only; 0 for walks).
        public var readings: Int
        /// Whether it is still under way.
        public var isActive: Bool
    }

    /// One area of the spatial check.
    public struct Area: Sendable, Equatable {
        public var name: String
        public var floor: UInt16
        public var polygon: Polygon
        /// Samples in it.
        public var samples: Int
        /// Whether it has enough to be held out on its own.
        public var isChecked: Bool
    }

    public var tag: TagIdentity?
    public var phase: Phase
    public var place: Place?
    /// Reference points and walks so far.
    public var places: Int
    /// Readings of the survey tag kept.
    public var readings: Int
    /// Calibration samples (per agent and window, with truth).
    public var samples: Int
    /// The spatial check's areas as they stand.
    public var areas: [Area]
    /// The fewest samples an area needs to be held out.
    public var minimumAreaSamples: Int
    /// The covered share (0…1) of each surveyed floor: below 60 %, every agent on it keeps the map's constants.
    public var coverage: [UInt16: Double]
    /// Readings not kept, by why.
    public var drops: SurveyDrops

    /// The areas that still lack samples.
    public var lacking: [Area] { areas.filter { !$0.isChecked } }

    /// The progress for the page: `{"tag","phase","place":{…},"places","readings","samples","minimum_area_samples",
    /// "areas":[{"name","floor","samples","needed","checked","polygon":[[x,y],…]}],"lacking":["A1",…],
    /// "coverage":[{"floor","share"}],"dropped":{"other_tags","bad_readings","rejected_batches"}}`.
    public var json: JSONValue {
        let place: JSONValue =
            self.place.map { place in
                .object(
                    JSONObject([
                        ("kind", .string(place.isPoint ? "point" : "walk")), ("floor", .number(Double(place.floor))),
                        ("x", .number(place.position.x.rounded(toDecimals: 3))),
                        ("y", .number(place.position.y.rounded(toDecimals: 3))),
                        ("progress", .number(place.progress.rounded(toDecimals: 3))),
                        ("readings", .number(Double(place.readings))), ("active", .bool(place.isActive)),
                    ]))
            } ?? .null
        let areas = areas.map { area -> JSONValue in
            .object(
                JSONObject([
                    ("name", .string(area.name)), ("floor", .number(Double(area.floor))),
                    ("samples", .number(Double(area.samples))),
                    ("needed", .number(Double(max(minimumAreaSamples - area.samples, 0)))),
                    ("checked", .bool(area.isChecked)),
                    ("polygon", .array(area.polygon.vertices.map { .array([.number($0.x), .number($0.y)]) })),
                ]))
        }
        let coverage = coverage.sorted { $0.key < $1.key }.map { floor, share -> JSONValue in
            .object(JSONObject([("floor", .number(Double(floor))), ("share", .number(share.rounded(toDecimals: 3)))]))
        }
        let dropped = JSONValue.object(
            JSONObject([
                ("other_tags", .number(Double(drops.otherTags))), ("bad_readings", .number(Double(drops.badReadings))),
                ("rejected_batches", .number(Double(drops.rejectedBatches.values.reduce(0, +)))),
            ]))
        return .object(
            JSONObject([
                ("tag", tag.map { .string($0.description) } ?? .null), ("phase", .string(phase.rawValue)),
                ("place", place), ("places", .number(Double(places))), ("readings", .number(Double(readings))),
                ("samples", .number(Double(samples))), ("minimum_area_samples", .number(Double(minimumAreaSamples))),
                ("areas", .array(areas)), ("lacking", .array(lacking.map { .string($0.name) })),
                ("coverage", .array(coverage)), ("dropped", dropped),
            ]))
    }
}

/// The spatial check's areas and the coverage for some readings and truth.
struct SurveyAreaCounts: Sendable {
    var areas: [SurveyProgress.Area] = []
    var minimum = 0
    var samples = 0
    var coverage: [UInt16: Double] = [:]
}

extension SurveySession {
    /// The progress at `now`. Mutating only to keep the areas' counts until the readings or truth change.
    public mutating func progress(now: Double) -> SurveyProgress {
        let key = SIMD2(readings.count, truth.count)
        let counts: SurveyAreaCounts
        if let cached = areasCache, cached.key == key {
            counts = cached.areas
        } else {
            counts = areaCounts(now: now)
            areasCache = (key, counts)
        }
        let phase: SurveyProgress.Phase
        switch activity {
        case .idle: phase = tag == nil ? .notStarted : .idle
        case .standing: phase = .standing
        case .walking: phase = .walking
        }
        return SurveyProgress(
            tag: tag, phase: phase, place: place(now: now), places: places, readings: readings.count,
            samples: counts.samples, areas: counts.areas, minimumAreaSamples: counts.minimum,
            coverage: counts.coverage, drops: drops)
    }

    /// The point or walk under way, else the last one.
    private func place(now: Double) -> SurveyProgress.Place? {
        let isActive: Bool
        let shown: Activity
        if case .idle = activity {
            guard let finished else { return nil }
            (isActive, shown) = (false, finished)
        } else {
            (isActive, shown) = (true, activity)
        }
        switch shown {
        case .idle:
            return nil
        case .standing(let point):
            return .init(
                isPoint: true, floor: point.floor, position: point.point, progress: point.progress(now: now),
                readings: point.readings, isActive: isActive)
        case .walking(let walk):
            return .init(
                isPoint: false, floor: walk.floor, position: walk.position(at: walk.closed ?? now),
                progress: walk.progress(now: now), readings: 0, isActive: isActive)
        }
    }

    /// The spatial check's areas over what is recorded, with the point or walk under way closed at `now`.
    private func areaCounts(now: Double) -> SurveyAreaCounts {
        var copy = self
        let provisional = copy.close(now: now).truth
        guard
            let calibration = try? GuidedCalibration(
                document: document, readings: readings, truth: truth + provisional, window: configuration.window)
        else { return SurveyAreaCounts() }
        let areas = calibration.surveyAreas()
        return SurveyAreaCounts(
            areas: areas.areas.map {
                .init(name: $0.name, floor: $0.floor, polygon: $0.polygon, samples: $0.samples, isChecked: $0.isChecked)
            },
            minimum: areas.minimumSamples, samples: calibration.samples.count,
            coverage: calibration.coverage(of: calibration.samples).shares)
    }
}
