import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

@Suite("Writing constants into the map document")
struct MapDocumentTests {
    static let text = """
        {"description": "kept as it was",
         "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test"},
         "model": {"measured_power": -59, "path_loss_exponent": 2.0},
         "floors": [{"major": 1, "name": "Ground", "outline": [[0, 0], [30, 0], [30, 20], [0, 20]]}],
         "agents": [{"id": "a", "floor": 1, "x": 3, "y": 3, "z": 2.5, "rssi_offset": 9},
                    {"id": "b", "floor": 1, "x": 27, "y": 3, "z": 2.5}],
         "tags": [{"id": "ibeacon-F7826DA6-4FA2-4E98-8024-BC5B71E0893E-1-1", "name": "Alice"}]}
        """

    @Test("replaces and adds members, keeps everything else, and the result loads")
    func editsInPlace() throws {
        let original = try document(Self.text)
        let edited = MapDocument.apply(
            agents: [
                "a": AgentConstants(rssiOffset: -1.234_56, pathLossExponent: 2.345_67),
                "b": AgentConstants(rssiOffset: 4, pathLossExponent: 3),
                "nobody": AgentConstants(rssiOffset: 1, pathLossExponent: 2),
            ],
            powers: [try testTag(1): -61.27, try testTag(2): -55.04],
            to: original)
        let root = try #require(edited.object)
        #expect(root.keys == ["description", "site", "model", "floors", "agents", "tags"])
        #expect(root["description"] == "kept as it was")
        let agents = try #require(root["agents"]?.array)
        let first = try #require(agents[0].object)
        #expect(first.keys == ["id", "floor", "x", "y", "z", "rssi_offset", "path_loss_exponent"])
        #expect(first["rssi_offset"] == .number(-1.23))
        #expect(first["path_loss_exponent"] == .number(2.346))
        let tags = try #require(root["tags"]?.array)
        #expect(tags.count == 2)
        #expect(tags[0].object?["name"] == "Alice")
        #expect(tags[0].object?["measured_power"] == .number(-61.3))
        #expect(tags[1].object?["id"] == .string(try testTag(2).description))
        #expect(tags[1].object?["measured_power"] == .number(-55))

        let text = try MapDocument.text(edited)
        #expect(text.hasSuffix("}\n"))
        let map = try FloorMap.parse(Array(text.utf8)).get()
        #expect(map.agents[0].rssiOffset == -1.23)
        #expect(map.agents[1].pathLossExponent == 3)
        #expect(map.knownTag(try testTag(1))?.measuredPower == -61.3)
        #expect(map.knownTag(try testTag(2))?.name == (try testTag(2)).description)
    }

    @Test("an accuracy scale goes into the model, which is made when the map has none, and loads")
    func accuracyScale() throws {
        let edited = MapDocument.apply(agents: [:], powers: [:], accuracyScale: 0.834, to: try document(Self.text))
        let model = try #require(edited.object?["model"]?.object)
        #expect(model.keys == ["measured_power", "path_loss_exponent", "accuracy_scale"])
        #expect(model["accuracy_scale"] == .number(0.83))
        #expect(try FloorMap.load(edited).get().model.accuracyScale == 0.83)
        var bare = try #require(try document(Self.text).object)
        bare["model"] = nil
        let made = MapDocument.apply(agents: [:], powers: [:], accuracyScale: 1.2, to: .object(bare))
        #expect(made.object?["model"]?.object?.keys == ["accuracy_scale"])
        #expect(try FloorMap.load(made).get().model.accuracyScale == 1.2)
        // Without a scale, the model is left as it was.
        #expect(MapDocument.apply(agents: [:], powers: [:], to: .object(bare)).object?["model"] == nil)
    }

    @Test("a map without tags gets a tags list only when there are powers to write")
    func addsTagsOnlyWhenNeeded() throws {
        let original = try squareMap(agents: [("a", 3, 3)])
        let agentsOnly = MapDocument.apply(
            agents: ["a": AgentConstants(rssiOffset: 1, pathLossExponent: 2)], powers: [:], to: original)
        #expect(agentsOnly.object?["tags"] == nil)
        let withPower = MapDocument.apply(agents: [:], powers: [try testTag(): -50], to: original)
        #expect(withPower.object?["tags"]?.array?.count == 1)
        _ = try MapDocument.text(withPower)
    }

    @Test("a document that is not a map is refused before anything is written")
    func refusesBrokenDocuments() throws {
        #expect(throws: JSONParseError.self) { try MapDocument.parse(Array("{\"site\": ".utf8)) }
        #expect(throws: MapProblems.self) { try MapDocument.text(["agents": []]) }
    }
}
