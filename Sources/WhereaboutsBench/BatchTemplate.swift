import WhereaboutsCore

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

    private init(chunks: [[UInt8]], count: Int, tags: [Int]) {
        self.chunks = chunks
        self.count = count
        self.tags = tags
    }

    /// One batch with the readings of both; `tags` lists the first's, then the second's (each indexes its own load).
    static func joined(_ first: BatchTemplate, _ second: BatchTemplate) -> BatchTemplate {
        guard first.count > 0 else { return second }
        guard second.count > 0 else { return first }
        var chunks = first.chunks
        chunks[chunks.count - 1] += Array(",".utf8) + second.chunks[0]
        chunks += second.chunks.dropFirst()
        return BatchTemplate(chunks: chunks, count: first.count + second.count, tags: first.tags + second.tags)
    }

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

extension BatchTemplate {
    /// `count` windows of the load's tags, each agent's batch of each made now: a bench makes them before its clock
    /// starts and plays them in turn (`--distinct`), since making 10,000 tags' readings and their JSON takes longer
    /// than a second here.
    static func windows(of load: inout SyntheticLoad, count: Int) -> [[BatchTemplate]] {
        let tagIDs = load.tags.map(\.identity.description)
        var windows: [[BatchTemplate]] = []
        for _ in 0..<count { windows.append(load.nextWindow().map { BatchTemplate($0, tagIDs: tagIDs) }) }
        return windows
    }
}
