import WhereaboutsCore

extension MapRenderer {
    /// `base` (a whole picture made by ``svg(map:)``) with a group of class `group` drawn over it: each floor's part
    /// from `perFloor`, in the frame that `svg(map:)` draws that floor in, then `trailer`. `base` unchanged when it
    /// is not a whole picture.
    func overlaid(
        _ base: String, map: FloorMap, group: String, trailer: String = "",
        perFloor: (Floor, FloorFrame) -> String
    ) -> String {
        let closing = "</svg>\n"
        guard base.hasSuffix(closing) else { return base }
        var overlay = "<g class=\"\(group)\">\n"
        var left = margin
        for floor in map.floors {
            let (minimum, maximum) = floor.outline.bounds
            let frame = FloorFrame(
                floor: floor.major, left: left, top: margin + 24, minimum: minimum, maximum: maximum, scale: scale)
            left += frame.size.width + margin
            overlay += perFloor(floor, frame)
        }
        overlay += trailer + "</g>\n"
        return String(base.dropLast(closing.count)) + overlay + closing
    }
}
