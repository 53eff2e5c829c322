import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

@Suite("Tag battery publisher")
struct TagBatteryPublisherTests {
    @Test("a tag another share speaks for is not published, and published once this one does")
    func ownership() throws {
        let map = try PipelineHarness().map
        let topics = Topics(site: map.site.uuid)
        var publisher = TagBatteryPublisher(map: map, topics: topics)
        let reading = ReadingBatch.Reading(tag: try alice(), time: 0, rssi: -60, batteryMillivolts: 3000)
        #expect(publisher.batch([.accepted(reading)], publishes: { _ in false }).isEmpty)
        let published = publisher.batch([.accepted(reading)], publishes: { _ in true })
        #expect(
            published == [
                .publish(
                    Publication(
                        topic: topics.tagBattery(tag: try alice()), payload: "3000", qos: .atLeastOnce, retain: true,
                        priority: .background))
            ])
    }

    @Test("a tag the new map no longer names is not published again on a reconnection")
    func forgottenTag() throws {
        let map = try PipelineHarness().map
        var publisher = TagBatteryPublisher(map: map, topics: Topics(site: map.site.uuid))
        let reading = ReadingBatch.Reading(tag: try alice(), time: 0, rssi: -60, batteryMillivolts: 3000)
        _ = publisher.batch([.accepted(reading)], publishes: { _ in true })
        let result = #"{"id":"j","tag":"\#(try alice())","status":"ok","values":{"battery":80}}"#
        _ = publisher.gattResult(Array(result.utf8))
        #expect(publisher.connected().count == 2)
        var without = map
        without.knownTags = []
        publisher.replaceMap(without)
        #expect(publisher.connected().isEmpty)
    }
}
