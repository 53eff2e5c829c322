/// The request connections' budget (streams have their own): how many are open, in all and per peer address, and
/// which one to give up when a newcomer finds the budget full.
///
/// **Why evict rather than refuse.** A client that holds a slot without finishing its request (idle, or trickling its
/// head) costs the server a slot and gives nothing; a newcomer that sends its request at once is answered within one
/// turn of the loop. So a full budget gives up its *oldest* unfinished connection, not the newcomer: an attacker must
/// keep opening connections to hold slots, and each new one pushes out its own oldest, while a good client's request
/// (the newest connection) is read before enough newer ones arrive to reach it. This holds when attacker and good
/// client share an address (everything on one host comes from 127.0.0.1), where a per-address limit alone could not
/// tell them apart. Connections whose response is sent and that only linger for the peer's close go first; those
/// still being answered are never given up (their write timeout bounds them).
///
/// **Per address.** No address holds more than ``perAddressLimit``: a newcomer from an address at its limit pushes out
/// that address's own oldest; when the whole budget is full, the address holding the most pays. So a flood from one
/// address never pushes out another address's connections while it has its own to give up.
///
/// Values only, no sockets: the poll loop asks, closes what it is told, and reports every change.
struct ConnectionBudget {
    /// Whether a connection may be given up, and how readily.
    enum Standing {
        /// Its request has not all arrived (idle, slow, or a body trickling in): given up oldest first.
        case unfinished
        /// Answered and shut on our side, waiting for the peer to close: given up first.
        case lingering
        /// Being answered: never given up for a newcomer.
        case busy
    }

    /// What to do with a newcomer.
    enum Decision: Equatable {
        /// Take it: there is room.
        case admit
        /// Give up this connection (by id), then take the newcomer.
        case evict(Int)
        /// No room and nothing to give up: refuse the newcomer.
        case refuse
    }

    /// Request connections at most, in all.
    let limit: Int
    /// Request connections at most from one address.
    let perAddressLimit: Int

    private var members: [Int: (address: String, standing: Standing)] = [:]
    private var perAddress: [String: Int] = [:]
    /// Per address, the ids that became unfinished or lingering, in that order; stale entries (closed, or moved on)
    /// are skipped when met and swept when they outnumber the live ones.
    private var queues: [String: (unfinished: IDQueue, lingering: IDQueue)] = [:]

    init(limit: Int, perAddressLimit: Int) {
        self.limit = max(limit, 1)
        self.perAddressLimit = max(min(perAddressLimit, limit), 1)
    }

    /// Connections counted now.
    var count: Int { members.count }

    /// Entries in the queues, stale ones included (they stay within twice the live count, plus a few).
    var queuedCount: Int { queues.values.reduce(0) { $0 + $1.unfinished.count + $1.lingering.count } }

    /// Connections counted now from `address`.
    func count(from address: String) -> Int { perAddress[address] ?? 0 }

    /// Whether a newcomer from `address` fits, and if not, which connection to give up for it.
    mutating func decide(newcomerFrom address: String) -> Decision {
        if count(from: address) >= perAddressLimit {
            return oldestEvictable(from: address).map { .evict($0) } ?? .refuse
        }
        guard members.count >= limit else { return .admit }
        return anyEvictable().map { .evict($0) } ?? .refuse
    }

    /// The connection to give up when room is needed (the budget is full, or the process is out of descriptors): the
    /// oldest evictable one of the address holding the most, or of the next address with one.
    mutating func anyEvictable() -> Int? {
        for (heavy, _) in perAddress.sorted(by: { $0.value > $1.value }) {
            if let victim = oldestEvictable(from: heavy) { return victim }
        }
        return nil
    }

    /// Counts a newly accepted connection (unfinished).
    mutating func admit(_ id: Int, address: String) {
        guard members[id] == nil else { return }
        members[id] = (address, .unfinished)
        perAddress[address, default: 0] += 1
        queues[address, default: (IDQueue(), IDQueue())].unfinished.append(id)
    }

    /// Records that a connection moved on (its request complete, its response sent).
    mutating func set(_ id: Int, _ standing: Standing) {
        guard let member = members[id], member.standing != standing else { return }
        members[id] = (member.address, standing)
        if standing == .lingering { queues[member.address]?.lingering.append(id) }
        sweep(member.address)
    }

    /// Stops counting a connection (closed, or become a stream).
    mutating func remove(_ id: Int) {
        guard let member = members.removeValue(forKey: id) else { return }
        let left = (perAddress[member.address] ?? 1) - 1
        if left > 0 {
            perAddress[member.address] = left
            sweep(member.address)
        } else {
            perAddress[member.address] = nil
            queues[member.address] = nil
        }
    }

    /// The address's connection to give up first: its oldest lingering one, else its oldest unfinished one.
    private mutating func oldestEvictable(from address: String) -> Int? {
        guard var queue = queues[address] else { return nil }
        defer { queues[address] = queue }
        while let id = queue.lingering.first {
            if members[id]?.standing == .lingering { return id }
            queue.lingering.removeFirst()
        }
        while let id = queue.unfinished.first {
            if members[id]?.standing == .unfinished { return id }
            queue.unfinished.removeFirst()
        }
        return nil
    }

    /// Drops stale entries once they outnumber the address's live connections, so that the queues stay bounded by
    /// what is open however many connections come and go.
    private mutating func sweep(_ address: String) {
        guard var queue = queues[address] else { return }
        let live = perAddress[address] ?? 0
        guard queue.unfinished.count + queue.lingering.count > 2 * live + 16 else { return }
        queue.unfinished.keep { members[$0]?.standing == .unfinished }
        queue.lingering.keep { members[$0]?.standing == .lingering }
        queues[address] = queue
    }
}

/// Ids in arrival order, taken from the front in O(1).
struct IDQueue {
    private var items: [Int] = []
    private var head = 0

    var count: Int { items.count - head }
    var first: Int? { head < items.count ? items[head] : nil }

    mutating func append(_ id: Int) { items.append(id) }

    mutating func removeFirst() {
        guard head < items.count else { return }
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    /// Keeps only the ids `isLive` accepts, in order.
    mutating func keep(where isLive: (Int) -> Bool) {
        items = items[head...].filter(isLive)
        head = 0
    }
}
