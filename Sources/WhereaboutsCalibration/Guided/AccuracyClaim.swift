public import WhereaboutsCore
public import WhereaboutsWire

/// How honest a map's published accuracy is on a survey, and the scale that makes it the 68 % radius there.
///
/// The survey's readings are replayed through the locator's pipeline with the map as it will be written, and each fix
/// of a moving tag has its error against the truth divided by the accuracy it published. Only a moving tag's fixes
/// count: a tag standing at a reference point settles, its errors shrink well inside the claim meant for a walking one,
/// and a survey of points alone would halve every claim (a simulated room surveyed at points asked for 0.51; a later
/// walk then had 37 % of its fixes within their claims, 45 % on the map as it was). The 68th percentile of those ratios
/// is what the published accuracy must be multiplied by for 68 % of the fixes to fall within it; the map's
/// ``RadioModel/accuracyScale`` times that is written as `model.accuracy_scale`. A calibrated map makes the tracker's
/// errors smaller, and its claims smaller by a rule of thumb (the radio map's surveyed share); the survey measures how
/// well the two agree on the user's own site, where no constant of ours can (docs/calibration.md, "The accuracy it
/// claims").
public struct AccuracyClaim: Sendable, Hashable {
    /// Fixes scored: those with truth at their time and a second either side, on the truth's floor, the tag
    /// moving at ``movingSpeed`` or more.
    public var fixes: Int
    /// The share of them within their published accuracy, replayed with the map's scale as it was.
    public var within: Double
    /// The map's scale as it was.
    public var scaleBefore: Double
    /// The scale to write, within ``bounds``; nil with fewer than ``minimumFixes`` fixes.
    public var scale: Double?
    /// The share within the accuracy that `scale` publishes (the accuracy never feeds back into the estimate, so the
    /// same replay scores it).
    public var withinAfter: Double?

    /// The fewest fixes whose 68th percentile is worth writing: with 100, the share it gives is 68 ± 5 %.
    public static let minimumFixes = 100
    /// The scales written: a survey that calls for more than halving or doubling the claim says more about itself
    /// (a still tag on a few points, say) than about the tracker.
    public static let bounds: ClosedRange<Double> = 0.5...2
    /// The share of fixes the published accuracy should hold.
    public static let target = 0.68
    /// The speed (metres per second, over the truth two seconds apart around a fix) from which a tag counts as
    /// moving: a slow robot's 0.1–0.3 m/s does, a tag at a reference point (0) does not.
    public static let movingSpeed = 0.1

    /// The claim from each scored fix's error over its published accuracy, replayed with a map whose scale was
    /// `scaleBefore`.
    public init(ratios: [Double], scaleBefore: Double) {
        let ratios = ratios.filter(\.isFinite).sorted()
        fixes = ratios.count
        within = ratios.isEmpty ? 0 : Double(ratios.count(where: { $0 <= 1 })) / Double(ratios.count)
        self.scaleBefore = scaleBefore
        guard ratios.count >= Self.minimumFixes, scaleBefore > 0 else { return }
        // The smallest ratio that at least 68 % of the fixes are within, then the written scale kept in bounds.
        let index = max(Int((Self.target * Double(ratios.count)).rounded(.up)) - 1, 0)
        let scale = min(max(scaleBefore * ratios[index], Self.bounds.lowerBound), Self.bounds.upperBound)
        self.scale = scale
        let factor = scale / scaleBefore
        withinAfter = Double(ratios.count(where: { $0 <= factor })) / Double(ratios.count)
    }
}

extension GuidedCalibration {
    /// Scores the published accuracy of `positions`, replayed with `map`, against the truth (``AccuracyClaim``).
    public func accuracyClaim(of map: FloorMap, positions: [PositionRecord]) -> AccuracyClaim {
        var ratios: [Double] = []
        for position in positions where position.accuracy > 0 {
            let tag = position.tag
            guard let here = truth.position(of: tag, at: position.time), here.floor == position.floor,
                let before = truth.position(of: tag, at: position.time - 1),
                let after = truth.position(of: tag, at: position.time + 1),
                before.floor == here.floor, after.floor == here.floor,
                after.point.distance(to: before.point) >= 2 * AccuracyClaim.movingSpeed
            else { continue }
            ratios.append(Point(x: position.x, y: position.y).distance(to: here.point) / position.accuracy)
        }
        return AccuracyClaim(ratios: ratios, scaleBefore: map.model.accuracyScale)
    }
}
