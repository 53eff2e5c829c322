import Testing
import WhereaboutsLocator
import WhereaboutsWire

/// The lease's rules, on the pure state machine: times are monotonic seconds, the broker is played by hand.
@Suite("Lease keeper")
struct LeaseKeeperTests {
    static let ttl = 3.0

    static func keeper(_ instance: String) -> LeaseKeeper {
        LeaseKeeper(configuration: LeaseKeeper.Configuration(instance: instance, ttl: ttl))
    }

    static func claims(_ decisions: [LeaseKeeper.Decision]) -> [LocatorLease] {
        decisions.compactMap {
            if case .publish(let lease) = $0 { return lease }
            return nil
        }
    }

    /// Runs `keeper` from standby to active at `start`, the broker echoing its claim at once; returns the claim.
    static func activate(_ keeper: inout LeaseKeeper, at start: Double) throws -> LocatorLease {
        _ = keeper.connected(now: start)
        #expect(keeper.tick(now: start + ttl - 0.01).isEmpty, "no claim before a whole lease of silence")
        let claim = try #require(claims(keeper.tick(now: start + ttl)).first)
        #expect(claim.term == 1 && claim.renewal == 0)
        _ = keeper.received(claim, now: start + ttl + 0.001)
        #expect(!keeper.isActive(now: start + ttl + 0.1), "a confirmed claim waits for the settle time")
        let decisions = keeper.tick(now: start + ttl + 0.3)
        #expect(decisions.contains { if case .tookOver = $0 { true } else { false } })
        #expect(keeper.isActive(now: start + ttl + 0.3))
        return claim
    }

    /// "a", active from 3.3 (``activate(_:at:)`` at 0), and "b", a standby connected at 0.
    static func holderAndStandby() throws -> (holder: LeaseKeeper, standby: LeaseKeeper) {
        var holder = keeper("a")
        var standby = keeper("b")
        _ = standby.connected(now: 0)
        _ = try activate(&holder, at: 0)
        return (holder, standby)
    }

    @Test("a standby claims a lease nobody renews, and is active only once its claim came back and settled")
    func claimsSilentLease() throws {
        var keeper = Self.keeper("a")
        #expect(keeper.tick(now: 100).isEmpty, "no claim while disconnected")
        #expect(keeper.validUntil == -.infinity, "no lease held yet: nothing may be sent as a holder")
        let claim = try Self.activate(&keeper, at: 0)
        #expect(keeper.validUntil == Self.ttl + claim.ttl - keeper.configuration.margin, "from the claim, sent at 3")
    }

    @Test("a claim that never comes back from the broker is given up, and nothing was published meanwhile")
    func unconfirmedClaim() throws {
        var keeper = Self.keeper("a")
        _ = keeper.connected(now: 0)
        _ = keeper.tick(now: 3)
        #expect(!keeper.isActive(now: 4))
        let decisions = keeper.tick(now: 6)
        #expect(decisions.contains { if case .stoodDown = $0 { true } else { false } })
        #expect(keeper.roleName == "standby")
    }

    @Test("the holder renews four times a lease and stays active while the renewals come back")
    func renewals() throws {
        var keeper = Self.keeper("a")
        _ = try Self.activate(&keeper, at: 0)
        var now = 3.3
        for _ in 0..<20 {
            now += 0.8
            for renewal in Self.claims(keeper.tick(now: now)) { _ = keeper.received(renewal, now: now + 0.002) }
            #expect(keeper.isActive(now: now))
        }
    }

    @Test(
        "a paused holder finds its lease gone before it publishes, and gives up before any standby could claim",
        arguments: [2.0, 2.5, 5.0, 60.0])
    func pausedHolder(pause: Double) throws {
        var (holder, standby) = try Self.holderAndStandby()
        // The holder's last renewal, sent at 5, reaches the standby at 5.01; then the holder stops (SIGSTOP).
        let renewal = try #require(Self.claims(holder.tick(now: 5)).first)
        _ = holder.received(renewal, now: 5.005)
        _ = standby.received(renewal, now: 5.01)
        // The standby claims exactly a lease after it heard the renewal, not before.
        #expect(Self.claims(standby.tick(now: 5.01 + Self.ttl - 0.001)).isEmpty)
        let holderEnd = 5 + Self.ttl - holder.configuration.margin
        #expect(!holder.isActive(now: holderEnd), "the holder's own clock ends its lease first")
        #expect(holderEnd < 5.01 + Self.ttl)
        // Resumed after the pause, its first look at the lease stands it down.
        let resumed = 5 + pause
        #expect(holder.validUntil == holderEnd, "the client's sending deadline")
        let decisions = holder.check(now: resumed)
        if resumed >= holderEnd {
            #expect(decisions.contains { if case .stoodDown = $0 { true } else { false } })
            #expect(!holder.isActive(now: resumed))
            #expect(holder.validUntil == holderEnd, "kept after the stand-down: what was handed over must not go")
        } else {
            #expect(holder.isActive(now: resumed))
        }
    }

    @Test("a better claim deposes the holder; a stale one is answered with a renewal")
    func competingClaims() throws {
        var keeper = Self.keeper("b")
        let mine = try Self.activate(&keeper, at: 0)
        // A deposed holder's queued renewal of an older term overwrites the retained lease: renewed at once.
        let stale = LocatorLease(holder: "a", term: mine.term - 1, renewal: 40, ttl: Self.ttl)
        let answer = Self.claims(keeper.received(stale, now: 4))
        #expect(answer.count == 1 && answer.first?.holder == "b" && answer.first?.term == mine.term)
        #expect(keeper.isActive(now: 4))
        // An empty lease (a release that is not ours) is answered the same way.
        #expect(Self.claims(keeper.received(nil, now: 4.1)).first?.holder == "b")
        // A higher term wins.
        let taken = LocatorLease(holder: "a", term: mine.term + 1, renewal: 0, ttl: Self.ttl)
        #expect(keeper.validUntil > 4.2)
        let decisions = keeper.received(taken, now: 4.2)
        #expect(decisions.contains { if case .stoodDown = $0 { true } else { false } })
        #expect(!keeper.isActive(now: 4.2))
        // Deposed before its lease ran out, its lease ends now: what its client has not written yet would reach the
        // broker after the new holder's states, and must not go.
        #expect(keeper.validUntil == 4.2)
    }

    @Test("a claim of the holder's own term, made by a locator cut off from the broker, does not depose the holder")
    func lateClaimOfHeldTerm() throws {
        // "z" outranks "a" by its id: before, its claim of term 1 deposed "a", which had held term 1 for seconds.
        var holder = Self.keeper("a")
        _ = try Self.activate(&holder, at: 0)
        var claimant = Self.keeper("z")
        _ = claimant.connected(now: 0)
        let late = try #require(Self.claims(claimant.tick(now: 3)).first)
        #expect(late.term == 1 && late.renewal == 0, "it never heard a's claim: one above the best term it heard")
        let answer = holder.received(late, now: 5)
        #expect(!answer.contains { if case .stoodDown = $0 { true } else { false } }, "\(answer)")
        let renewal = try #require(Self.claims(answer).first, "the holder answers with a renewal")
        #expect(renewal.holder == "a" && renewal.term == 1 && renewal.renewal > 0)
        #expect(holder.isActive(now: 5))
        // The claimant hears the renewal of the term it claimed: the term was taken, its claim lost.
        _ = claimant.received(late, now: 5.001)
        let decisions = claimant.received(renewal, now: 5.002)
        #expect(decisions.contains { if case .stoodDown = $0 { true } else { false } }, "\(decisions)")
        #expect(!claimant.tick(now: 6).contains { if case .tookOver = $0 { true } else { false } })
        #expect(!claimant.isActive(now: 6))
    }

    @Test("a claim given up because it did not come back, then come back late, is claimed again at once")
    func lateClaimClaimedAgain() throws {
        var keeper = Self.keeper("b")
        _ = keeper.connected(now: 0)
        let claim = try #require(Self.claims(keeper.tick(now: 3)).first)
        #expect(keeper.tick(now: 6).contains { if case .stoodDown = $0 { true } else { false } })
        // A partition heals at 7: the claim held up in it reaches the broker, deposes the holder, and comes back.
        let again = keeper.received(claim, now: 7)
        #expect(Self.claims(again) == [claim], "claimed again at once, not a whole lease later")
        _ = keeper.received(claim, now: 7.01)
        #expect(keeper.tick(now: 7.3).contains { if case .tookOver = $0 { true } else { false } })
        #expect(keeper.isActive(now: 7.3))
        #expect(keeper.validUntil == 7 + Self.ttl - keeper.configuration.margin, "valid from the claim sent at 7")
        // Not so a claim that was beaten meanwhile: the renewal of a newer holder of its term outranks it.
        var beaten = Self.keeper("c")
        _ = beaten.connected(now: 0)
        let mine = try #require(Self.claims(beaten.tick(now: 3)).first)
        _ = beaten.tick(now: 6)
        _ = beaten.received(LocatorLease(holder: "a", term: 1, renewal: 2, ttl: Self.ttl), now: 6.5)
        #expect(Self.claims(beaten.received(mine, now: 7)).isEmpty)
    }

    @Test("a standby that was paused hears the renewals that waited in its queue before it claims")
    func pausedStandby() throws {
        var (holder, standby) = try Self.holderAndStandby()
        var now = 3.3
        while now < 10 {
            now += 0.02
            _ = standby.tick(now: now)
            for renewal in Self.claims(holder.tick(now: now)) {
                _ = holder.received(renewal, now: now + 0.001)
                _ = standby.received(renewal, now: now + 0.002)
            }
        }
        // The standby stops at 10 (SIGSTOP) while the holder goes on renewing; resumed at 30, its first tick comes
        // before the renewals that waited for it.
        var waiting: [LocatorLease] = []
        while now < 30 {
            now += 0.02
            for renewal in Self.claims(holder.tick(now: now)) {
                _ = holder.received(renewal, now: now + 0.001)
                waiting.append(renewal)
            }
        }
        #expect(holder.isActive(now: 30))
        #expect(Self.claims(standby.tick(now: 30)).isEmpty, "a healthy holder deposed after a pause")
        for renewal in waiting { _ = standby.received(renewal, now: 30.01) }
        #expect(Self.claims(standby.tick(now: 30.03)).isEmpty)
        #expect(standby.roleName == "standby")
        // Had no renewal waited (the holder died meanwhile), it claims a margin after the pause at the soonest.
        var orphan = Self.keeper("c")
        _ = orphan.connected(now: 0)
        _ = orphan.tick(now: 1)
        #expect(Self.claims(orphan.tick(now: 30)).isEmpty)
        let margin = orphan.configuration.margin
        #expect(Self.claims(orphan.tick(now: 30 + margin - 0.01)).isEmpty)
        #expect(Self.claims(orphan.tick(now: 30 + margin)).count == 1)
    }

    /// Two standbys connected at 0 claim at 3; the broker handles a's claim first, then b's, and both hear both, in
    /// that order; both tick at 3.5, past the settle time. Returns the two claims.
    static func claimAtOnce(_ a: inout LeaseKeeper, _ b: inout LeaseKeeper) throws -> (LocatorLease, LocatorLease) {
        _ = a.connected(now: 0)
        _ = b.connected(now: 0)
        let claimA = try #require(claims(a.tick(now: 3)).first)
        let claimB = try #require(claims(b.tick(now: 3)).first)
        for index in 0..<2 {
            var subject = index == 0 ? a : b
            _ = subject.received(claimA, now: 3.01)
            _ = subject.received(claimB, now: 3.011)
            _ = subject.tick(now: 3.5)
            if index == 0 { a = subject } else { b = subject }
        }
        return (claimA, claimB)
    }

    @Test("two standbys that claim at once agree on the winner: the higher holder id of the same term")
    func simultaneousClaims() throws {
        var a = Self.keeper("a")
        var b = Self.keeper("b")
        _ = try Self.claimAtOnce(&a, &b)
        #expect(!a.isActive(now: 3.5))
        #expect(b.isActive(now: 3.5))
    }

    @Test("two locators started under one name are two holders: they claim at once, and one wins")
    func oneNameTwoProcesses() throws {
        let first = LeaseKeeper.Configuration(name: "locator", process: 0x5f3a_9c21)
        let second = LeaseKeeper.Configuration(name: "locator", process: 0x0000_0007)
        #expect(first.instance == "locator/5f3a9c21" && second.instance == "locator/00000007")
        var a = LeaseKeeper(configuration: first)
        var b = LeaseKeeper(configuration: second)
        let (claimA, claimB) = try Self.claimAtOnce(&a, &b)
        #expect(claimA != claimB, "byte for byte the same claim: each would take the other's for its own")
        #expect(a.isActive(now: 3.5) != b.isActive(now: 3.5), "exactly one is active")
    }

    @Test("a clean stop lets the lease go, and a standby takes it at its next tick")
    func release() throws {
        var (holder, standby) = try Self.holderAndStandby()
        _ = standby.received(LocatorLease(holder: "a", term: 1, renewal: 0, ttl: Self.ttl), now: 3.01)
        #expect(holder.stop(now: 4) == [.release])
        #expect(holder.tick(now: 8).isEmpty, "a stopping locator claims nothing more")
        _ = standby.received(nil, now: 4.01)
        let claim = try #require(Self.claims(standby.tick(now: 4.02)).first)
        #expect(claim.holder == "b" && claim.term == 2)
    }

    @Test("the lease payload round-trips, and hostile ones are refused")
    func payload() throws {
        let lease = LocatorLease(holder: "locator-b", term: 4, renewal: 17, ttl: 3)
        #expect(lease.payload == #"{"holder":"locator-b","term":4,"renewal":17,"ttl":3}"#)
        #expect(LocatorLease(bytes: Array(lease.payload.utf8)) == lease)
        for bad in [
            "", "{}", #"{"holder":"","term":1,"renewal":0,"ttl":3}"#, #"{"holder":"a","term":-1,"renewal":0,"ttl":3}"#,
            #"{"holder":"a","term":1,"renewal":0,"ttl":0}"#, #"{"holder":"a","term":1.5,"renewal":0,"ttl":3}"#, "[1]",
        ] {
            #expect(LocatorLease(bytes: Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
