public import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

/// The bodies of the editor's survey routes, read strictly: `POST /edit/api/survey/start {"tag": "ibeacon-…"}`,
/// `POST /edit/api/survey/point {"floor": 1, "x": 4.2, "y": 3.5}` and, for a walk along a drawn route,
/// `{"floor": 1, "route": [[x, y], …], "speed": 1}`.
public enum SurveyRequests {
    /// The largest body the routes read.
    public static let maximumBytes = 65_536

    /// The survey tag of a start request.
    public static func tag(_ body: [UInt8]) throws(SurveyError) -> TagIdentity {
        let object = try self.object(body)
        guard let text = object["tag"]?.string, let tag = TagIdentity(wire: text) else {
            throw .invalidSetting("\"tag\" must be a tag identity (ibeacon-<uuid>-<major>-<minor>, …)")
        }
        return tag
    }

    /// The reference point of a point request.
    public static func point(_ body: [UInt8]) throws(SurveyError) -> (floor: UInt16, x: Double, y: Double) {
        let object = try self.object(body)
        guard let x = object["x"]?.double, let y = object["y"]?.double, x.isFinite, y.isFinite else {
            throw .invalidSetting("\"x\" and \"y\" must be numbers (metres on the map)")
        }
        return (try floor(object), x, y)
    }

    /// The route of a walk request; the speed defaults to 1 m/s.
    public static func walk(_ body: [UInt8]) throws(SurveyError) -> (floor: UInt16, route: [Point], speed: Double) {
        let object = try self.object(body)
        guard let points = object["route"]?.array, points.count <= 1000 else {
            throw .badRoute("\"route\" must be an array of [x, y] (at most 1000)")
        }
        var route: [Point] = []
        for point in points {
            guard let pair = point.array, pair.count == 2, let x = pair[0].double, let y = pair[1].double else {
                throw .badRoute("each point of \"route\" is [x, y]")
            }
            route.append(Point(x: x, y: y))
        }
        let speed = object["speed"].map { $0.double ?? .nan } ?? 1
        return (try floor(object), route, speed)
    }

    private static func object(_ body: [UInt8]) throws(SurveyError) -> JSONObject {
        guard body.count <= maximumBytes,
            let value = try? JSONParser(maximumBytes: maximumBytes, maximumDepth: 4).parse(body),
            let object = value.object
        else { throw .invalidSetting("the body must be a JSON object") }
        return object
    }

    private static func floor(_ object: JSONObject) throws(SurveyError) -> UInt16 {
        guard let number = object["floor"]?.double, let floor = UInt16(exactly: number) else {
            throw .invalidSetting("\"floor\" must be a floor's major")
        }
        return floor
    }
}
