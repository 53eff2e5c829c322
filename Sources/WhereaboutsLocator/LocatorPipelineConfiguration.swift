public import WhereaboutsCore
public import WhereaboutsWire

extension LocatorPipeline {
    /// Settings of the pipeline.
    public struct Configuration: Sendable {
        /// The engine's tuning.
        public var engine = LocatorEngine.Configuration()
        /// Limits on batch payloads.
        public var limits = BatchDecoder.Limits()
        /// Time tolerances for readings.
        public var tolerance = BatchDecoder.TimeTolerance()
        /// Seconds during which occupancy is held back, counted from the first batch (or recorded reading) taken
        /// after the start or a reload.
        public var warmUp: Double = 10
        /// Seconds between metrics messages.
        public var metricsInterval: Double = 10
        /// A tag's position is republished at least this often (seconds) while it is tracked …
        public var positionHeartbeat: Double = 30
        /// … and otherwise only when it moved this far (metres) or changed zone or floor.
        public var positionMinimumMove: Double = 0.1
        /// Whether to announce Home Assistant discovery configs.
        public var homeAssistantDiscovery = true
        /// Whether readings that pass the wire checks (before the engine's own) produce `.record` actions.
        public var recordsReadings = false
        /// Which radio constants to range with, and the automatic calibration's settings.
        public var calibration = LocatorCalibration.Configuration()
        /// The floors (majors) this locator owns when the site is split between locators (``FloorShare``); nil
        /// for the whole site. Floors the map does not have are ignored (the shell refuses them first).
        public var floors: [UInt16]? = nil
        /// With ``floors``: how many floors above and below them the locator hears (``FloorShare/margin``).
        public var floorMargin = FloorShare.defaultMargin

        public init() {}
    }
}
