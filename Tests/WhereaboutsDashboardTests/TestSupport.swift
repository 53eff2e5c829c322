import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsWire

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

func shippedMapText(_ name: String) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent("maps/\(name)"), encoding: .utf8)
}

func loadMap(_ text: String) throws -> FloorMap {
    try FloorMap.parse(Array(text.utf8)).get()
}

/// A message as the broker would deliver it.
struct Delivery {
    var topic: String
    var payload: [UInt8]

    init(_ topic: Topic, _ payload: String) {
        self.topic = topic.name
        self.payload = Array(payload.utf8)
    }

    init(raw topic: String, _ payload: String) {
        self.topic = topic
        self.payload = Array(payload.utf8)
    }
}

extension TagIdentity {
    static func demo(_ minor: UInt16) -> TagIdentity {
        guard let site = BeaconUUID("f7826da6-4fa2-4e98-8024-bc5b71e0893e") else { fatalError("bad literal UUID") }
        return .iBeacon(uuid: site, major: 100, minor: minor)
    }
}
