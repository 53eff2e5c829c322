import WhereaboutsCore
import WhereaboutsJSON

/// The common case of ``BatchDecoder``, read straight from the bytes without building a JSON tree.
///
/// It takes only what an agent writes: one object with exactly the batch members, each of its type, a `readings`
/// array of objects with only the reading members, strings of plain ASCII without escapes, no `null`, numbers in
/// JSON's grammar, whitespace anywhere JSON allows it. Anything else (a syntax error, an unknown or repeated member,
/// an escape, a batch-level problem) returns nil, and the batch goes through the tree decoder, which gives every
/// rejection its reason. So the verdicts are the tree decoder's by construction; the tests check that the two agree
/// on real, random and mutated batches.
struct BatchFastPath {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    /// Not the common shape: leave it to the tree decoder.
    private struct Unusual: Error {}

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The decoded batch, or nil to fall back on the tree decoder.
    mutating func decode(
        topicAgent: AgentID, isKnownAgent: (AgentID) -> Bool, now: Double, decoder: BatchDecoder
    ) -> BatchDecodeResult? {
        do throws(Unusual) {
            return try decodeBatch(topicAgent: topicAgent, isKnownAgent: isKnownAgent, now: now, decoder: decoder)
        } catch {
            return nil
        }
    }

    private mutating func decodeBatch(
        topicAgent: AgentID, isKnownAgent: (AgentID) -> Bool, now: Double, decoder: BatchDecoder
    ) throws(Unusual) -> BatchDecodeResult {
        var version: Double?
        var agentText: String?
        var epoch: Double?
        var seq: Double?
        var sent: Double?
        var outcomes: [ReadingOutcome]?
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        try members { key, reader throws(Unusual) in
            if reader.key(key, is: "v"), version == nil {
                version = try reader.number()
            } else if reader.key(key, is: "agent"), agentText == nil {
                agentText = try reader.string()
            } else if reader.key(key, is: "epoch"), epoch == nil {
                epoch = try reader.number()
            } else if reader.key(key, is: "seq"), seq == nil {
                seq = try reader.number()
            } else if reader.key(key, is: "sent"), sent == nil {
                sent = try reader.number()
            } else if reader.key(key, is: "readings"), outcomes == nil {
                outcomes = try reader.readings(maximum: decoder.limits.maximumReadings, now: now, decoder: decoder)
            } else {
                throw Unusual()
            }
        }
        skipWhitespace()
        guard position == bytes.count, let version, let agentText, let epoch, let seq, let sent, let outcomes else {
            throw Unusual()
        }
        // Only batches the tree decoder would accept are taken here; every batch-level verdict is its own.
        guard version == Double(ReadingBatch.formatVersion), let agent = AgentID(agentText), agent == topicAgent,
            isKnownAgent(agent), let epochValue = Self.sequence(epoch), let seqValue = Self.sequence(seq),
            sent.isFinite, sent >= 0, decoder.batchTimeVerdict(sent: sent, epoch: epochValue, now: now) == nil
        else { throw Unusual() }
        return .decoded(DecodedBatch(agent: agent, epoch: epochValue, seq: seqValue, sent: sent, outcomes: outcomes))
    }

    /// `epoch` and `seq` as the tree decoder reads them: integers in 0...2^53.
    private static func sequence(_ number: Double) -> Int? {
        guard number.isFinite, let integer = JSONValue.number(number).integer,
            (0...BatchDecoder.maximumSequence).contains(integer)
        else { return nil }
        return integer
    }

    // MARK: - Readings

    private mutating func readings(maximum: Int, now: Double, decoder: BatchDecoder) throws(Unusual) -> [ReadingOutcome]
    {
        skipWhitespace()
        try expect(UInt8(ascii: "["))
        var outcomes: [ReadingOutcome] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return outcomes
        }
        while true {
            guard outcomes.count < maximum else { throw Unusual() }
            outcomes.append(try reading(now: now, decoder: decoder))
            skipWhitespace()
            guard let next = peek() else { throw Unusual() }
            position += 1
            if next == UInt8(ascii: "]") { return outcomes }
            guard next == UInt8(ascii: ",") else { throw Unusual() }
        }
    }

    private mutating func reading(now: Double, decoder: BatchDecoder) throws(Unusual) -> ReadingOutcome {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        var tagBytes: Range<Int>?
        var time: Double?
        var rssi: Double?
        var count: Double?
        var variance: Double?
        var power: Double?
        var battery: Double?
        var temperature: Double?
        // In the order agents write them, so that the common reading matches each key at the first try.
        try members { key, reader throws(Unusual) in
            if reader.key(key, is: "tag"), tagBytes == nil {
                tagBytes = try reader.stringBytes()
            } else if reader.key(key, is: "t"), time == nil {
                time = try reader.number()
            } else if reader.key(key, is: "rssi"), rssi == nil {
                rssi = try reader.number()
            } else if reader.key(key, is: "n"), count == nil {
                count = try reader.number()
            } else if reader.key(key, is: "var"), variance == nil {
                variance = try reader.number()
            } else if reader.key(key, is: "power"), power == nil {
                power = try reader.number()
            } else if reader.key(key, is: "battery_mv"), battery == nil {
                battery = try reader.number()
            } else if reader.key(key, is: "temp_c"), temperature == nil {
                temperature = try reader.number()
            } else {
                throw Unusual()
            }
        }
        // The tree decoder's order of checks, member by member (BatchDecoder.reading, then validate).
        guard let tagBytes, let time, let rssi else { throw Unusual() }
        guard let tag = decoder.tags.identity(UnsafeBufferPointer(rebasing: bytes[tagBytes])) else {
            return .rejected(.badTag)
        }
        guard time.isFinite, rssi.isFinite else { return .rejected(.nonFinite) }
        func integer(_ number: Double?, else reason: RejectionReason) -> Result<Int?, RejectionReason> {
            guard let number else { return .success(nil) }
            guard number.isFinite else { return .failure(.nonFinite) }
            guard let integer = JSONValue.number(number).integer else { return .failure(reason) }
            return .success(integer)
        }
        let countValue: Int
        switch integer(count, else: .badCount) {
        case .failure(let reason): return .rejected(reason)
        case .success(let value): countValue = value ?? 1
        }
        if let variance, !variance.isFinite { return .rejected(.nonFinite) }
        let powerValue: Int?
        switch integer(power, else: .badPower) {
        case .failure(let reason): return .rejected(reason)
        case .success(let value): powerValue = value
        }
        let batteryValue: Int?
        switch integer(battery, else: .badTelemetry) {
        case .failure(let reason): return .rejected(reason)
        case .success(let value): batteryValue = value
        }
        if let temperature, !temperature.isFinite { return .rejected(.nonFinite) }
        let reading = ReadingBatch.Reading(
            tag: tag, time: time, rssi: rssi, count: countValue, variance: variance, power: powerValue,
            batteryMillivolts: batteryValue, temperature: temperature)
        if let reason = decoder.validate(reading, now: now) { return .rejected(reason) }
        return .accepted(reading)
    }

    // MARK: - Objects

    /// Reads `"key": value` pairs up to the closing brace; `body` reads each value (the opening brace is read). The
    /// key is handed over as where its characters lie, compared with ``key(_:is:)`` without making a string.
    private mutating func members(_ body: (Range<Int>, inout BatchFastPath) throws(Unusual) -> Void) throws(Unusual) {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            let key = try stringBytes(wordwise: false)
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try body(key, &self)
            skipWhitespace()
            guard let next = peek() else { throw Unusual() }
            position += 1
            if next == UInt8(ascii: "}") { return }
            guard next == UInt8(ascii: ",") else { throw Unusual() }
        }
    }

    /// Whether the key whose characters lie at `range` is `name` (plain ASCII).
    private func key(_ range: Range<Int>, is name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        var offset = 0
        while offset < range.count {
            guard bytes[range.lowerBound + offset] == expected[offset] else { return false }
            offset += 1
        }
        return true
    }

    // MARK: - Scalars

    /// A string of printable ASCII without escapes (anything else goes to the tree decoder).
    private mutating func string() throws(Unusual) -> String {
        let range = try stringBytes()
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Where the characters of such a string lie in the payload. `wordwise` reads eight bytes at a time first: for
    /// values (a tag's identity is some 50 characters), not for keys of a few, where the first word always holds
    /// the closing quote.
    private mutating func stringBytes(wordwise: Bool = true) throws(Unusual) -> Range<Int> {
        try expect(UInt8(ascii: "\""))
        let start = position
        // Eight bytes at a time while none of them can end the string or send it to the tree decoder; then byte by
        // byte, which decides.
        if wordwise, let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while position + 8 <= bytes.count,
                !Self.mayEndString(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)))
            {
                position += 8
            }
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return start..<(position - 1)
            }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { throw Unusual() }
            position += 1
        }
        throw Unusual()
    }

    /// Whether any of the eight bytes of `word` is a quote, a backslash, a control character or not printable ASCII
    /// (0x7F and up). Never false when one is; it may be true when none is (a byte above one that is), which only
    /// sends those bytes to the byte-by-byte loop.
    @inline(__always)
    static func mayEndString(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        // A byte below `limit` (at most 128) sets its high bit in (value − limit·ones) & ~value, and the lowest
        // such byte always does: borrows come only from bytes below the limit.
        func anyBelow(_ limit: UInt64, in value: UInt64) -> Bool { (value &- ones &* limit) & ~value & highBits != 0 }
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        // 0x7F plus one sets its high bit (a carry into it comes only from 0xFF, caught itself); 0x80 and up have it.
        let notASCII = ((word &+ ones) | word) & highBits != 0
        return anyBelow(0x20, in: word) || anyBelow(1, in: quotes) || anyBelow(1, in: backslashes) || notASCII
    }

    /// A JSON number, converted as the JSON parser converts it (correctly rounded).
    private mutating func number() throws(Unusual) -> Double {
        let start = position
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard let first = peek(), Self.isDigit(first) else { throw Unusual() }
        var mantissa: UInt64 = 0
        var digits = 0
        var exactMantissa = true
        func digit(_ byte: UInt8) {
            if digits < 19 {
                mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
                if mantissa != 0 || digits > 0 { digits += 1 }
            } else {
                exactMantissa = false
            }
        }
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            while let byte = peek(), Self.isDigit(byte) {
                digit(byte)
                position += 1
            }
        }
        var scale = 0
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let byte = peek(), Self.isDigit(byte) else { throw Unusual() }
            while let byte = peek(), Self.isDigit(byte) {
                digit(byte)
                scale -= 1
                position += 1
            }
        }
        var longExponent = false
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            position += 1
            var exponentSign = 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                if sign == UInt8(ascii: "-") { exponentSign = -1 }
                position += 1
            }
            guard let byte = peek(), Self.isDigit(byte) else { throw Unusual() }
            // An exponent of five digits or more is left to the conversion below: the digits after the point can
            // pull it back into range (`0.000…6e100000`), so it must not be cut short.
            var exponent = 0
            while let byte = peek(), Self.isDigit(byte) {
                if exponent < 10_000 { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
                position += 1
            }
            longExponent = exponent >= 10_000
            scale += exponentSign * exponent
        }
        // Clinger's fast path: a mantissa below 2^53 and a power of ten exactly representable (10^0 … 10^22) make
        // one correctly rounded IEEE operation, the same value the parser's strtod-style conversion gives.
        if exactMantissa, !longExponent, mantissa < (1 << 53), (-22...22).contains(scale) {
            let value =
                scale >= 0
                ? Double(mantissa) * Self.powersOfTen[scale] : Double(mantissa) / Self.powersOfTen[-scale]
            return negative ? -value : value
        }
        // A mantissa past 2^53 with a few decimals (a time in seconds with its microseconds): one exact division.
        if exactMantissa, !longExponent, (-19 ... -1).contains(scale),
            let value = Self.quotient(mantissa, powerOfTen: -scale)
        {
            return negative ? -value : value
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw Unusual() }
        return value
    }

    /// `mantissa / 10^exponent`, correctly rounded (to nearest, ties to even), for `exponent` in 1...19; nil when
    /// the quotient would be too large for one division (a mantissa over 2^55 times the divisor's bit length).
    ///
    /// The mantissa is shifted left so that the integer quotient has 55 or 56 bits, divided once in full width,
    /// and rounded to 53 bits with the remainder as the sticky bit. Both the shift and the rounding are exact, so
    /// the result is the one a correctly rounded conversion of the text gives.
    static func quotient(_ mantissa: UInt64, powerOfTen exponent: Int) -> Double? {
        guard mantissa != 0, (1...19).contains(exponent) else { return nil }
        let divisor = powersOfTenExact[exponent]
        let shift = 55 + (64 - divisor.leadingZeroBitCount) - (64 - mantissa.leadingZeroBitCount)
        guard shift >= 0 else { return nil }
        // mantissa << shift in two words (Swift's shifts by 64 or more, or by a negative amount, are well defined).
        let wide = (high: mantissa >> (64 - shift), low: mantissa << shift)
        let (quotient, remainder) = divisor.dividingFullWidth(wide)
        let drop = (64 - quotient.leadingZeroBitCount) - 53
        var significand = quotient >> drop
        let rest = quotient & ((1 << drop) - 1)
        let half: UInt64 = 1 << (drop - 1)
        if rest > half || (rest == half && (remainder != 0 || significand & 1 == 1)) { significand += 1 }
        return Double(significand) * Double(sign: .plus, exponent: drop - shift, significand: 1)
    }

    private static let powersOfTenExact: [UInt64] = (0...19).map { exponent in
        var value: UInt64 = 1
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: - Bytes

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func expect(_ byte: UInt8) throws(Unusual) {
        guard peek() == byte else { throw Unusual() }
        position += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }
}
