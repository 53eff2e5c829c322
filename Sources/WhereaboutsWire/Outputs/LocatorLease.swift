public import WhereaboutsJSON

/// Which locator of a site is active: the retained payload of `…/locator/lease` (`--role auto`).
///
/// ```json
/// {"holder":"locator-b/5f3a9c21","term":4,"renewal":17,"ttl":3}
/// ```
///
/// `holder` is the active locator's instance id (its broker username, else its client id, then a number of its
/// process's own). `term` grows by one at every take-over; of two claims, the one with the higher `(term, holder)`
/// wins, and a renewal wins over a claim of its own term (``outranks(_:)``). `renewal` counts the holder's
/// renewals within its term, so that it recognises its own renewals coming back from the broker. `ttl` is the
/// validity in seconds: each locator judges it by its own monotonic clock from when it sent (the holder) or received
/// (a standby) the renewal, never by a timestamp in the payload, so the machines' clocks need not agree. An empty
/// retained payload means the holder let the lease go at a clean stop.
public struct LocatorLease: JSONPayload, Hashable {
    /// The active locator's instance id.
    public var holder: String
    /// The take-over count; higher wins.
    public var term: Int
    /// The holder's renewal count within its term.
    public var renewal: Int
    /// Seconds the lease is valid after a renewal.
    public var ttl: Double

    /// A lease claim or renewal.
    public init(holder: String, term: Int, renewal: Int, ttl: Double) {
        self.holder = holder
        self.term = term
        self.renewal = renewal
        self.ttl = ttl
    }

    /// Whether this claim wins over `other`: a higher term; in the same term, a holder's renewal over a bare claim
    /// (`renewal` 0); else the greater holder id (two standbys that claimed at once agree on the winner without
    /// talking).
    ///
    /// A renewal shows that its holder's claim came back from the broker and settled: the term was taken. A claim of
    /// the same term made by another locator was made before that locator saw it taken (it claims one above the best
    /// term it heard), by a locator cut off from the broker whose claim arrived late, after a partition healed. It
    /// must not depose the holder: the holder answers it with a renewal, and its claimant, hearing the renewal,
    /// stands down.
    public func outranks(_ other: LocatorLease) -> Bool {
        (term, renewal > 0 ? 1 : 0, holder) > (other.term, other.renewal > 0 ? 1 : 0, other.holder)
    }

    public var json: JSONValue {
        .object(
            JSONObject([
                ("holder", .string(holder)), ("term", .number(Double(term))), ("renewal", .number(Double(renewal))),
                ("ttl", .number(ttl)),
            ]))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> LocatorLease in
            let holder = try reader.string("holder")
            guard (1...256).contains(holder.utf8.count) else { throw .invalid("holder") }
            let ttl = try reader.number("ttl")
            guard ttl.isFinite, ttl > 0, ttl <= 3600 else { throw .invalid("ttl") }
            return LocatorLease(
                holder: holder, term: try reader.integer("term", in: 0...Int(Int32.max)),
                renewal: try reader.integer("renewal", in: 0...(1 << 53)), ttl: ttl)
        }
    }

    /// Reads a received payload: nil for an empty one (the lease was let go) or one that is not a lease.
    public init?(bytes: [UInt8]) {
        guard !bytes.isEmpty, bytes.count <= 1024, let text = String(validating: bytes, as: UTF8.self),
            let lease = try? LocatorLease(payload: text)
        else { return nil }
        self = lease
    }
}
