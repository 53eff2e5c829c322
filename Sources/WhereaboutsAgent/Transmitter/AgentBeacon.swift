public import WhereaboutsAdvertising
public import WhereaboutsCore
public import WhereaboutsWire

/// What an agent transmits as an iBeacon, so that boards can hear each other (for calibration and health).
///
/// By default an agent advertises the site UUID, its floor as the major, and a minor derived from its id by
/// ``minor(for:)``. Two ids can share a minor (there are only 65,536); give one of them `--advertise` explicitly.
public enum AgentBeacon {
    /// The 16-bit minor for an agent id: the 32-bit FNV-1a hash of the id's UTF-8 bytes, folded to 16 bits by
    /// XOR-ing its upper and lower halves.
    ///
    /// FNV-1a: start from 2166136261; for each byte, XOR it in, then multiply by 16777619 (mod 2³²). Stable across
    /// versions and platforms: changing it would rename every agent's beacon. For example `hall-1` → 48955 (0xBF3B).
    public static func minor(for agent: AgentID) -> UInt16 {
        var hash: UInt32 = 2_166_136_261
        for byte in agent.rawValue.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return UInt16(truncatingIfNeeded: hash >> 16) ^ UInt16(truncatingIfNeeded: hash)
    }

    /// The default advertisement: site UUID, floor as major, the id's minor, −59 dBm at 1 m.
    public static func advertisement(site: BeaconUUID, floor: UInt16, agent: AgentID, measuredPower: Int8 = -59)
        -> IBeaconAdvertisement
    {
        IBeaconAdvertisement(uuid: site, major: floor, minor: minor(for: agent), measuredPower: measuredPower)
    }

    /// Parses `UUID:MAJOR:MINOR[:POWER]`; power in dBm, −127…20, default −59.
    public static func parse(_ text: String) -> IBeaconAdvertisement? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (3...4).contains(parts.count), let uuid = BeaconUUID(String(parts[0])),
            let major = UInt16(parts[1]), let minor = UInt16(parts[2])
        else { return nil }
        var power: Int8 = -59
        if parts.count == 4 {
            guard let value = Int8(parts[3]), value <= 20 else { return nil }
            power = value
        }
        return IBeaconAdvertisement(uuid: uuid, major: major, minor: minor, measuredPower: power)
    }
}
