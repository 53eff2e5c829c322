/// The third-smallest of `distances`, the largest when there are fewer than three, 0 when there are none: the
/// distance to the third-nearest agent, on which a fix resting on its three nearest ranges is judged (the published
/// accuracy's model error, and the plan's). The three smallest are kept by insertion: no array, no sort.
func thirdSmallest(_ distances: some Sequence<Double>) -> Double {
    var nearest = (Double.infinity, Double.infinity, Double.infinity)
    var count = 0
    for distance in distances {
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
