extension TagEstimator {
    /// The published accuracy of a grid estimate (``TagEstimate/accuracy``): the radius that holds the true position
    /// about 68 % of the time.
    ///
    /// Two errors, independent, added in quadrature. The posterior's own, ``GridFilter/Configuration/accuracyPerSpread``
    /// times its RMS `spread` (already widened by the readings' misfit); and the model's, which the posterior cannot
    /// see because the filter believes its model: a level off by ε dB (shadowing that lasts for seconds, furniture,
    /// a wrong exponent) puts a range off by ε·ln 10 / (10 n) of its length, so the error grows with the distance to
    /// the agents the fix rests on, ``GridFilter/Configuration/modelErrorPerMetre`` per metre to the third-nearest
    /// agent that heard the tag on its floor (fewer than three: the farthest of them). A single factor on the spread
    /// cannot fit both a tag among close agents, whose posterior is about as wide as its errors, and one far from
    /// them, whose errors are 1.4–1.5 times its spread (docs/tracker.md, "Accuracy"). The sum is multiplied by the
    /// map's ``RadioModel/accuracyScale``, which `whereabouts calibrate` measures on a survey.
    func gridAccuracy(spread: Double, at position: Point, floor: UInt16, ranges: [AgentRange]) -> Double {
        let tuning = configuration.grid
        let own = tuning.accuracyPerSpread * spread
        let model =
            tuning.modelErrorPerMetre * thirdNearestAgentDistance(from: position, floor: floor, ranges: ranges)
            * surveyedShare(at: position, floor: floor, ranges: ranges)
        return map.model.accuracyScale * (own * own + model * model).squareRoot()
    }

    /// How much of the model's error a survey leaves, at `position`: the root mean square, over the agents on `floor`
    /// among `ranges`, of each one's radio-map deviation there relative to its deviation far from the survey (1 for
    /// an agent without a radio map, or where the survey did not reach).
    func surveyedShare(at position: Point, floor: UInt16, ranges: [AgentRange]) -> Double {
        guard hasRadioSurfaces else { return 1 }
        var total = 0.0
        var count = 0
        for range in ranges where map.agents[range.agentIndex].floor == floor {
            count += 1
            guard let surface = map.agents[range.agentIndex].radioSurface, surface.priorDeviation > 0 else {
                total += 1
                continue
            }
            let share = surface.residual(at: position).variance / (surface.priorDeviation * surface.priorDeviation)
            total += min(share, 1)
        }
        return count == 0 ? 1 : (total / Double(count)).squareRoot()
    }

    /// The horizontal distance from `position` to the third-nearest of the agents on `floor` among `ranges` (the
    /// farthest of them when fewer than three; 0 with none).
    func thirdNearestAgentDistance(from position: Point, floor: UInt16, ranges: [AgentRange]) -> Double {
        // The three smallest, in order, kept by insertion: no array, no sort.
        var nearest = (Double.infinity, Double.infinity, Double.infinity)
        var count = 0
        for range in ranges where map.agents[range.agentIndex].floor == floor {
            let distance = map.agents[range.agentIndex].position.distance(to: position)
            count += 1
            if distance < nearest.0 {
                nearest = (distance, nearest.0, nearest.1)
            } else if distance < nearest.1 {
                nearest = (nearest.0, distance, nearest.1)
            } else if distance < nearest.2 {
                nearest.2 = distance
            }
        }
        switch count {
        case 0: return 0
        case 1: return nearest.0
        case 2: return nearest.1
        default: return nearest.2
        }
    }
}
