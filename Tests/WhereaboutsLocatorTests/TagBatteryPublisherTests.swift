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
}
