public import WhereaboutsWire

/// Which locator of a pair is active, decided through the broker alone: a retained ``LocatorLease`` that the active
/// one renews and a standby watches. A state machine that returns decisions; time is the monotonic clock, in seconds.
///
/// The rules, and why they keep two locators from publishing at once:
/// - **The holder judges its lease by its own clock, from when it sent a renewal.** A renewal counts only once it
///   has come back from the broker (the lease topic is read without `noLocal`), so the broker has it; the holder is
///   then active until `sent + ttl - margin`. A standby that received the same renewal received it after it was
///   sent, and waits until `received + ttl`: the holder always gives up first, by at least `margin`, whatever the
///   network or a paused process did in between. Nothing in the payload is a timestamp, so clocks need not agree.
/// - **A standby claims the lease** when it has heard no renewal for `ttl` while connected (or the holder let it go
///   at a clean stop), with `term + 1`. It becomes active only when its claim has come back and no better claim has
///   arrived for ``Configuration/settle`` more; of two claims the higher `(term, holder)` wins.
/// - **A holder that finds a better claim, or its own lease unconfirmed past its validity, stands down** before it
///   publishes anything else, and the service discards what it still held unsent; deposed by a claim, its lease ends
///   at once, so that its client writes nothing it was handed before either.
/// - **A standby judges the silence only on a live loop**: a tick that comes long after the last (a pause) waits a
///   margin, for the renewals queued behind it.
/// - **A stale claim** (a lower term, sent by a holder that has since been deposed, or an empty lease) is answered by
///   the holder with a renewal, so the retained lease always names the active locator again within a round trip. So
///   is a claim of the holder's own term (``LocatorLease/outranks(_:)``): its claimant had not seen the term taken
///   when it claimed, being cut off from the broker; its claimant stands down on hearing the renewal.
/// - **A claim that comes back after it was given up** (held up in a partition) and is the best heard is claimed
///   again at once: it has deposed the holder, and the site must not wait a whole lease for a new one.
public struct LeaseKeeper: Sendable {
    /// Settings of the lease.
    public struct Configuration: Sendable, Hashable {
        /// This locator's instance id, the lease's `holder`: its name, `/`, and a number of its own process
        /// (`locator-b/5f3a9c21`). Two locators given the same name (one account for both, on a broker that does not
        /// tie client ids to accounts) would otherwise each take the other's claims and renewals for its own, and
        /// both be active; a restarted locator is a new holder too, and claims a new term.
        public var instance: String
        /// Seconds a renewal keeps the lease.
        public var ttl: Double

        /// `name` is the locator's account (or client id); `process` tells its process apart (the shell draws it at
        /// random at start).
        public init(name: String, process: UInt32, ttl: Double = 3) {
            let digits = String(process, radix: 16)
            instance = name + "/" + String(repeating: "0", count: 8 - digits.count) + digits
            self.ttl = max(ttl, 0.5)
        }

        /// A keeper whose holder id is `instance` as it is.
        public init(instance: String, ttl: Double = 3) {
            self.instance = instance
            self.ttl = max(ttl, 0.5)
        }

        /// How often the holder renews: four times a lease.
        public var renewInterval: Double { ttl / 4 }
        /// How much sooner than a standby the holder gives up.
        public var margin: Double { ttl / 4 }
        /// How long a confirmed claim waits for a competing one before acting.
        public var settle: Double { min(ttl / 12, 0.25) }
    }

    /// Where this locator stands.
    public enum Role: Sendable, Hashable {
        /// Following the readings, publishing nothing.
        case standby
        /// A claim is out; `confirmed` is when it came back from the broker.
        case claiming(LocatorLease, sent: Double, confirmed: Double?)
        /// Publishing, until `validUntil` unless a renewal comes back.
        case active(LocatorLease, validUntil: Double)
    }

    /// What the service must do.
    public enum Decision: Sendable, Hashable {
        /// Publish this lease (retained, QoS 1): a claim, a renewal, or an answer to a stale one.
        case publish(LocatorLease)
        /// Publish an empty retained lease: the holder lets it go at a clean stop.
        case release
        /// Became active: publish all retained state now.
        case tookOver(String)
        /// No longer active: hold everything back and discard what is still unsent.
        case stoodDown(String)
    }

    /// The settings.
    public let configuration: Configuration
    /// Where this locator stands.
    public private(set) var role = Role.standby {
        didSet {
            if case .active(_, let validUntil) = role { self.validUntil = validUntil }
        }
    }
    /// Until when the last lease this locator held is valid by its own clock: in the future while it is active; in
    /// the past once the lease lapsed or a better claim deposed it (then it ends when the claim is heard); `-infinity`
    /// if it never held one. Whatever it handed over as the holder must reach the broker before then, or not at all
    /// (``LocatorService/sendingDeadline``).
    public private(set) var validUntil = -Double.infinity
    /// Whether the service's connection is up, as far as the keeper knows.
    public private(set) var isConnected = false

    /// The best claim heard from anyone, and when it (or its latest renewal) was received.
    private var latest: LocatorLease?
    private var latestAt = -Double.infinity
    /// The holder let the lease go (an empty retained lease).
    private var released = false
    /// This locator is stopping: it never claims again.
    private var isStopped = false
    /// Why the outstanding claim was made, for the log.
    private var claimReason = ""

    /// Send times of this holder's renewals not yet back from the broker, by renewal number.
    private var pending: [Int: Double] = [:]
    private var lastRenewal = -Double.infinity
    /// When the last tick came.
    private var lastTick = -Double.infinity

    /// A keeper that starts as a standby.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Whether this locator may publish now.
    public func isActive(now: Double) -> Bool {
        if case .active(_, let validUntil) = role { return now < validUntil }
        return false
    }

    /// The role's name for logs and metrics: `active` or `standby` (a pending claim is still standby).
    public var roleName: String {
        if case .active = role { return "active" }
        return "standby"
    }

    // MARK: - Inputs

    /// The broker accepted a connection. A standby starts its wait again (the retained lease is on its way); a
    /// pending claim is given up, since it may never have arrived; the holder renews at once.
    public mutating func connected(now: Double) -> [Decision] {
        isConnected = true
        switch role {
        case .standby:
            latestAt = now
            released = false
            return []
        case .claiming:
            role = .standby
            latestAt = now
            released = false
            return [.stoodDown("reconnected with a claim outstanding: gave it up")]
        case .active:
            return check(now: now) + renew(now: now)
        }
    }

    /// The connection dropped: no claims until it is back.
    public mutating func disconnected() {
        isConnected = false
    }

    /// A message on the lease topic: `lease` is nil for an empty payload (let go) or one that does not parse.
    public mutating func received(_ lease: LocatorLease?, now: Double) -> [Decision] {
        var decisions = check(now: now)
        guard let lease else {
            switch role {
            case .standby: released = true
            case .claiming: break
            case .active: decisions += renew(now: now)  // the lease must name the holder again
            }
            return decisions
        }
        switch role {
        case .active(let mine, let validUntil):
            if lease.holder == mine.holder, lease.term == mine.term {
                if let sent = pending[lease.renewal] {
                    role = .active(mine, validUntil: max(validUntil, sent + configuration.ttl - configuration.margin))
                    pending = pending.filter { $0.key > lease.renewal }
                }
            } else if lease.outranks(mine) {
                decisions += standDown(
                    hearing: lease, now: now, "the lease was taken by \(lease.holder) (term \(lease.term))")
            } else {
                decisions += renew(now: now)  // a stale claim overwrote ours
            }
        case .claiming(let claim, let sent, let confirmed):
            if lease == claim {
                if confirmed == nil { role = .claiming(claim, sent: sent, confirmed: now) }
            } else if lease.outranks(claim) {
                role = .standby
                note(lease, now: now)
                decisions.append(.stoodDown("\(lease.holder) claimed the lease first (term \(lease.term))"))
            }
        case .standby:
            guard latest.map({ !$0.outranks(lease) }) ?? true else { break }
            if lease.holder == configuration.instance, lease.renewal == 0, isConnected, !isStopped {
                decisions += reclaim(lease, now: now)
            } else {
                note(lease, now: now)
            }
        }
        return decisions
    }

    /// The periodic check: the holder renews or finds its lease lapsed; a claim settles; a standby claims a lease
    /// that went.
    public mutating func tick(now: Double) -> [Decision] {
        var decisions = check(now: now)
        // Ticks come a few times a second. One long after the last (the process was paused, or its loop fell behind)
        // may come before messages that waited in the queue meanwhile, the holder's renewals among them: a standby
        // hears them before it judges the silence, and claims a margin from now at the soonest. Half a lease is
        // long: a pause can depose a live holder only if it outlasts a lease less a renewal interval.
        let stalled = lastTick > -.infinity && now - lastTick > configuration.ttl / 2
        lastTick = now
        switch role {
        case .active:
            if now - lastRenewal >= configuration.renewInterval { decisions += renew(now: now) }
        case .claiming(let claim, let sent, let confirmed):
            if let confirmed, now - confirmed >= configuration.settle {
                role = .active(claim, validUntil: sent + configuration.ttl - configuration.margin)
                lastRenewal = sent
                pending = [:]
                released = false
                let previous = latest.map { " from \($0.holder) (term \($0.term))" } ?? ""
                decisions.append(.tookOver("took over the lease\(previous), term \(claim.term): \(claimReason)"))
                decisions += renew(now: now)
            } else if now - sent >= configuration.ttl {
                role = .standby
                latestAt = now
                decisions.append(
                    .stoodDown("the claim did not come back from the broker within \(configuration.ttl) s"))
            }
        case .standby:
            if stalled { latestAt = max(latestAt, now - configuration.ttl + configuration.margin) }
            guard isConnected, !isStopped, released || now - latestAt >= configuration.ttl else { break }
            let claim = LocatorLease(
                holder: configuration.instance, term: (latest?.term ?? 0) + 1, renewal: 0, ttl: configuration.ttl)
            role = .claiming(claim, sent: now, confirmed: nil)
            claimReason = released ? "it was let go" : "no renewal for \(configuration.ttl) s"
            decisions.append(.publish(claim))
        }
        return decisions
    }

    /// A clean stop: the holder lets the lease go, so that a standby takes over at once; a stopping locator claims
    /// nothing more.
    public mutating func stop(now: Double) -> [Decision] {
        let wasActive = isActive(now: now)
        role = .standby
        isStopped = true
        return wasActive ? [.release] : []
    }

    // MARK: - Helpers

    /// Stands down when the holder's lease has not been confirmed within its validity; the service calls it before
    /// every input it may publish on.
    public mutating func check(now: Double) -> [Decision] {
        guard case .active(let mine, let validUntil) = role, now >= validUntil else { return [] }
        role = .standby
        // Wait a whole lease before claiming again, as for any lease heard last now.
        note(mine, now: now)
        pending = [:]
        return [.stoodDown("lost the lease: no renewal came back from the broker within its validity")]
    }

    private mutating func standDown(hearing lease: LocatorLease, now: Double, _ reason: String) -> [Decision] {
        role = .standby
        // The claim's locator takes over a settle time after it, and republishes every state: what this one handed
        // over and the client has not written yet would land after that, stale, so it must not go at all.
        validUntil = min(validUntil, now)
        pending = [:]
        note(lease, now: now)
        return [.stoodDown(reason)]
    }

    /// Our own claim, given up when it did not come back within a lease (held up while this locator was cut off from
    /// the broker), came back after all and is the best heard: it has deposed whoever held the lease, who now waits a
    /// whole lease before claiming. Claimed again at once, the site has an active locator a round trip and a settle
    /// time later instead (a partition's heal left it without one for 3.3 s).
    private mutating func reclaim(_ claim: LocatorLease, now: Double) -> [Decision] {
        role = .claiming(claim, sent: now, confirmed: nil)
        claimReason = "its claim of term \(claim.term), given up, reached the broker late and deposed the holder"
        return [.publish(claim)]
    }

    private mutating func note(_ lease: LocatorLease, now: Double) {
        latest = lease
        latestAt = now
        released = false
    }

    private mutating func renew(now: Double) -> [Decision] {
        guard case .active(let mine, let validUntil) = role else { return [] }
        let renewal = LocatorLease(holder: mine.holder, term: mine.term, renewal: mine.renewal + 1, ttl: mine.ttl)
        role = .active(renewal, validUntil: validUntil)
        pending[renewal.renewal] = now
        lastRenewal = now
        if pending.count > 64, let oldest = pending.keys.min() { pending[oldest] = nil }
        return [.publish(renewal)]
    }
}
