/// Smooths a tag's positions: a constant-velocity Kalman filter per axis, with a speed gate and adaptive
/// process noise.
///
/// A still tag should not wander, and a walking one should be followed within a few seconds. One fixed process
/// noise cannot do both, so the filter watches its normalised innovations: while fixes agree with the prediction
/// it keeps the process noise low (heavy smoothing); when they keep landing outside it, it raises the noise and
/// follows. Fixes that would need more than ``Configuration/maximumSpeed`` count for less.
public struct TrackFilter: Sendable, Hashable {
    /// Tuning of the filter.
    public struct Configuration: Sendable, Hashable {
        /// Process noise while still, in m²/s³ (white acceleration density).
        public var quietProcessNoise: Double = 0.01
        /// Process noise while clearly moving.
        public var movingProcessNoise: Double = 1.0
        /// Fastest plausible walking speed, in m/s.
        public var maximumSpeed: Double = 2.5
        /// Weight of the newest normalised innovation in its running average (0…1).
        public var innovationSmoothing: Double = 0.3
        /// After this many implausible fixes in a row that agree with each other, the track restarts at them.
        public var implausibleRunToRestart: Int = 3
        /// How close (metres) implausible fixes must lie to their mean to count as agreeing.
        public var agreementRadius: Double = 3

        public init() {}
    }

    private var x: AxisState
    private var y: AxisState
    /// When the filter last took a fix (seconds).
    public private(set) var time: Double
    private var innovationAverage = 1.0
    private var implausibleFixes: [Point] = []

    /// Starts a track at a fix.
    public init(position: Point, accuracy: Double, time: Double) {
        let variance = max(accuracy * accuracy / 2, 0.01)
        x = AxisState(position: position.x, velocity: 0, p11: variance, p12: 0, p22: 1)
        y = AxisState(position: position.y, velocity: 0, p11: variance, p12: 0, p22: 1)
        self.time = time
    }

    /// The smoothed position.
    public var position: Point { Point(x: x.position, y: y.position) }

    /// The smoothed velocity, in m/s.
    public var velocity: Point { Point(x: x.velocity, y: y.velocity) }

    /// A 1-sigma radius of the smoothed position, in metres.
    public var accuracy: Double { (x.p11 + y.p11).squareRoot() }

    /// Takes a fix.
    public mutating func update(
        position fix: Point, accuracy: Double, time fixTime: Double, configuration: Configuration
    ) {
        let elapsed = min(max(fixTime - time, 0), 60)
        // Blend between quiet and moving noise by how surprising recent fixes were (average NIS per axis ≈ 1
        // when the model fits).
        let surprise = min(max((innovationAverage - 1.5) / 3, 0), 1)
        let processNoise =
            configuration.quietProcessNoise + surprise
            * (configuration.movingProcessNoise - configuration.quietProcessNoise)
        x.predict(elapsed: elapsed, processNoise: processNoise)
        y.predict(elapsed: elapsed, processNoise: processNoise)

        var measurementVariance = max(accuracy * accuracy / 2, 0.01)
        let dx = fix.x - x.position
        let dy = fix.y - y.position
        let jump = (dx * dx + dy * dy).squareRoot()
        let reach = configuration.maximumSpeed * max(elapsed, 0.1) + 3 * (measurementVariance + x.p11).squareRoot()
        if jump > reach {
            implausibleFixes.append(fix)
            if implausibleFixes.count > configuration.implausibleRunToRestart {
                implausibleFixes.removeFirst()
            }
            if implausibleFixes.count == configuration.implausibleRunToRestart,
                let centre = Self.agreement(of: implausibleFixes, within: configuration.agreementRadius)
            {
                // Fix after fix says, consistently, that the tag is elsewhere (it was carried out of earshot and
                // came back, or the track went astray): believe them and start again there.
                self = TrackFilter(position: centre, accuracy: accuracy, time: max(time, fixTime))
                return
            }
            // Faster than anyone walks: trust this fix less, in proportion to how implausible it is.
            let ratio = jump / reach
            measurementVariance *= ratio * ratio
        } else {
            implausibleFixes.removeAll()
        }
        let nisX = x.update(measurement: fix.x, variance: measurementVariance)
        let nisY = y.update(measurement: fix.y, variance: measurementVariance)
        let nis = (nisX + nisY) / 2
        innovationAverage += configuration.innovationSmoothing * (min(nis, 50) - innovationAverage)
        x.limitVelocity(configuration.maximumSpeed)
        y.limitVelocity(configuration.maximumSpeed)
        time = max(time, fixTime)
    }

    /// The mean of the points when every one lies within `radius` of it, else nil.
    static func agreement(of points: [Point], within radius: Double) -> Point? {
        guard !points.isEmpty else { return nil }
        let centre = points.reduce(Point(x: 0, y: 0), +) * (1 / Double(points.count))
        return points.allSatisfy { $0.distance(to: centre) <= radius } ? centre : nil
    }

    /// Moves the track inside an outline when smoothing carried it out.
    public mutating func keep(inside outline: Polygon) {
        let current = position
        guard !outline.contains(current) else { return }
        let clamped = outline.clamped(current)
        x.position = clamped.x
        y.position = clamped.y
        x.velocity = 0
        y.velocity = 0
    }
}

/// One axis of a constant-velocity model: position, velocity and their 2×2 covariance.
private struct AxisState: Sendable, Hashable {
    var position: Double
    var velocity: Double
    var p11: Double
    var p12: Double
    var p22: Double

    mutating func predict(elapsed dt: Double, processNoise q: Double) {
        guard dt > 0 else { return }
        position += velocity * dt
        let dt2 = dt * dt
        let dt3 = dt2 * dt
        let n11 = p11 + 2 * dt * p12 + dt2 * p22 + q * dt3 / 3
        let n12 = p12 + dt * p22 + q * dt2 / 2
        let n22 = p22 + q * dt
        p11 = n11
        p12 = n12
        p22 = n22
    }

    /// Updates with a position measurement; returns the normalised innovation squared.
    mutating func update(measurement: Double, variance r: Double) -> Double {
        let innovation = measurement - position
        let s = p11 + r
        let k1 = p11 / s
        let k2 = p12 / s
        position += k1 * innovation
        velocity += k2 * innovation
        let n11 = (1 - k1) * p11
        let n12 = (1 - k1) * p12
        let n22 = p22 - k2 * p12
        p11 = n11
        p12 = n12
        p22 = max(n22, 1e-6)
        return innovation * innovation / s
    }

    mutating func limitVelocity(_ limit: Double) {
        velocity = min(max(velocity, -limit), limit)
    }
}
