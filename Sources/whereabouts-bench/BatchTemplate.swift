/// One agent's batch for one window, prepared as JSON text with gaps where the reading times go.
///
/// The times are filled in when the batch is sent (the wall clock then), so that a pre-made stream stays within
/// the locator's time tolerance however fast it is played; everything else is written once. The text is what
/// `ReadingBatch.payload` writes: `{"v":1,"agent":…,"epoch":…,"seq":…,"sent":…,"readings":[{"tag":…,"t":…,
/// "rssi":…,"n":…,"var":…,"power":-59},…]}`.
struct BatchTemplate {
    /// The readings' text, split at each `"t":` value.
    private var chunks: [[UInt8]] = []
    /// How many readings.
    let count: Int
    /// The tags, by index in the load, in order.
    let tags: [Int]

    init(_ heard: [SyntheticLoad.Heard], tagIDs: [String]) {
        count = heard.count
        tags = heard.map(\.tag)
        var chunk: [UInt8] = []
        for (index, reading) in heard.enumerated() {
            if index > 0 { chunk += Array(",".utf8) }
            chunk += Array("{\"tag\":\"\(tagIDs[reading.tag])\",\"t\":".utf8)
            chunks.append(chunk)
            chunk = Array(
                ",\"rssi\":\(reading.rssi),\"n\":\(reading.count),\"var\":\(reading.variance),\"power\":-59}".utf8)
        }
        chunks.append(chunk)
    }

    /// The payload for `agent` with sequence `seq`, every reading heard at `time`.
    func payload(agent: String, epoch: Int, seq: Int, time: Double) -> [UInt8] {
        let timeText = Array("\(time)".utf8)
        var bytes = Array(
            "{\"v\":1,\"agent\":\"\(agent)\",\"epoch\":\(epoch),\"seq\":\(seq),\"sent\":\(time),\"readings\":[".utf8)
        bytes.reserveCapacity(bytes.count + chunks.reduce(0) { $0 + $1.count } + count * timeText.count + 2)
        for (index, chunk) in chunks.enumerated() {
            bytes += chunk
            if index < count { bytes += timeText }
        }
        bytes += Array("]}".utf8)
        return bytes
    }
}
